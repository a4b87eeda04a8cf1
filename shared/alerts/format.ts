// Small, pure helpers for the text a human reads in an alert.

/** "850 ms", "1.5 s", "12 s", "2 min 5 s". */
export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) {
    const s = ms / 1000;
    return `${s < 10 ? Math.round(s * 10) / 10 : Math.round(s)} s`;
  }
  const totalS = Math.round(ms / 1000);
  const min = Math.floor(totalS / 60);
  const s = totalS % 60;
  return s === 0 ? `${min} min` : `${min} min ${s} s`;
}

/** "4.2 %" with at most one decimal. */
export function fmtPct(ratio: number): string {
  return `${Math.round(ratio * 1000) / 10} %`;
}

/** "db on checkout/web-1". */
export function semaphoreLabel(name: string, service: string, instance: string): string {
  return `${name} on ${service}/${instance}`;
}

const MAX_FRAME = 200;

/**
 * The first frame of a stack, the place a human looks first ("src/db.ts:42:7" or
 * "handler (src/db.ts:42:7)"). Undefined when there is no stack or it is blank.
 */
export function firstFrame(stack: string | undefined): string | undefined {
  if (stack === undefined) return undefined;
  for (const raw of stack.split("\n", 50)) {
    let line = raw.trim();
    // A header line ("holding "a" while acquiring "b" at:", an order inversion's) names no frame.
    if (line === "" || /^Error\b/.test(line) || line.endsWith(":")) continue;
    if (line.startsWith("at ")) line = line.slice(3);
    return line.length > MAX_FRAME ? `${line.slice(0, MAX_FRAME - 1)}…` : line;
  }
  return undefined;
}

/** "1 permit" / "3 permits". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Freeze a plain JSON-like value all the way down, so evidence handed out cannot be changed. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}

/** The first string field among `names` in an event's `detail`, bounded for a message. */
export function detailString(detail: Record<string, unknown> | undefined, ...names: string[]): string | undefined {
  if (detail === undefined) return undefined;
  for (const n of names) {
    const v = detail[n];
    if (typeof v === "string" && v !== "") return v.length > MAX_FRAME ? `${v.slice(0, MAX_FRAME - 1)}…` : v;
  }
  return undefined;
}
