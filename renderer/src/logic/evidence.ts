// An alert's evidence is a free-form object (numbers, a window, holders with stacks). These turn
// it into what the UI lays out: leak holders with their stacks, and every other number as a
// `path: value` line, so a new field the hub adds shows up without a UI change.

export interface LeakHolder {
  holderId: string;
  /** When the agent suspected it (agent clock). */
  t: number;
  /** How long it had been held at `t`. */
  heldMs: number | null;
  stack: string | null;
}

export function leakHolders(evidence: Record<string, unknown> | undefined): LeakHolder[] {
  const list = evidence?.holders;
  if (!Array.isArray(list)) return [];
  const out: LeakHolder[] = [];
  for (const h of list) {
    if (typeof h !== "object" || h === null) continue;
    const r = h as Record<string, unknown>;
    if (typeof r.holderId !== "string" || typeof r.t !== "number") continue;
    out.push({
      holderId: r.holderId,
      t: r.t,
      heldMs: typeof r.heldMs === "number" ? r.heldMs : null,
      stack: typeof r.stack === "string" ? r.stack : null,
    });
  }
  return out;
}

/** A holder's age at `now` (same clock as its `t`): what it had at `t`, plus the time since. */
export function holderAge(h: LeakHolder, now: number): number {
  return (h.heldMs ?? 0) + Math.max(0, now - h.t);
}

/** Stacks anywhere in the evidence (a double release's, an order inversion's), with where they were. */
export function evidenceStacks(evidence: Record<string, unknown> | undefined): { path: string; stack: string }[] {
  const out: { path: string; stack: string }[] = [];
  const walk = (v: unknown, path: string, depth: number): void => {
    if (depth > 6 || v === null || typeof v !== "object") return;
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      const p = path === "" ? k : `${path}.${k}`;
      if (typeof x === "string" && /stack/i.test(k) && x.includes("\n")) out.push({ path: p, stack: x });
      else if (path !== "" || k !== "holders") walk(x, p, depth + 1);
    }
  };
  walk(evidence, "", 0);
  return out;
}

/** Times: `t`, `from`, `to`, `since`, `lastSeen` and any `…At` (`lastAt`, `raisedAt`); epoch ms. */
const TIME_KEYS = /(^|\.)(t|from|to|since|lastSeen|[A-Za-z]*At)$/;

/**
 * Every scalar in the evidence as a line, nested keys joined with dots. Holders and stacks are
 * laid out on their own; long strings are cut. `t`-like fields are flagged as times.
 */
export function flattenEvidence(evidence: Record<string, unknown> | undefined, maxLines = 40): { path: string; value: string | number | boolean; time: boolean }[] {
  const out: { path: string; value: string | number | boolean; time: boolean }[] = [];
  const walk = (v: unknown, path: string, depth: number): void => {
    if (out.length >= maxLines) return;
    if (typeof v === "number" || typeof v === "boolean") {
      out.push({ path, value: v, time: typeof v === "number" && TIME_KEYS.test(path) && v > 1e12 });
    } else if (typeof v === "string") {
      if (!/stack/i.test(path)) out.push({ path, value: v.length > 200 ? `${v.slice(0, 199)}…` : v, time: false });
    } else if (Array.isArray(v)) {
      if (path === "holders") return;
      if (v.every((x) => typeof x !== "object" || x === null)) out.push({ path, value: v.join(", "), time: false });
      else v.slice(0, 10).forEach((x, i) => walk(x, `${path}[${i}]`, depth + 1));
    } else if (v !== null && typeof v === "object" && depth < 6) {
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) walk(x, path === "" ? k : `${path}.${k}`, depth + 1);
    }
  };
  walk(evidence, "", 0);
  return out;
}

/** Evidence fields in milliseconds are named so: `oldestWaitMs`, `waitMs.p99`, `window.coveredMs`. */
export function isDurationPath(path: string): boolean {
  return /Ms($|\.)/.test(path);
}

/** Evidence keys whose words are not their camelCase split. */
const KEY_WORDS: Record<string, string> = {
  p50: "p50",
  p90: "p90",
  p99: "p99",
  inUse: "in use",
  waitMs: "wait",
  holdMs: "hold",
  coveredMs: "covered",
  oldestWaitMs: "oldest wait",
  holderId: "holder",
  lastAt: "last seen at",
};

function words(key: string): string {
  const known = KEY_WORDS[key];
  if (known !== undefined) return known;
  // "releasedPerSec" → "released per sec", "leakThresholdMs" → "leak threshold"; the value says the unit.
  return key
    .replace(/Ms$/, "")
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase();
}

/**
 * An evidence path for people: `members[0].instance` → "Member 1 · instance",
 * `waitMs.p99` → "Wait · p99", `releasedPerSec.firstHalf` → "Released per sec · first half".
 */
export function evidenceLabel(path: string): string {
  const parts = path.split(".").map((part) => {
    const m = /^(.*)\[(\d+)\]$/.exec(part);
    if (m === null) return words(part);
    const name = words(m[1]);
    return `${name.endsWith("s") ? name.slice(0, -1) : name} ${Number(m[2]) + 1}`;
  });
  const text = parts.join(" · ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}
