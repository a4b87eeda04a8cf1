// Reading a benchmark's knobs from the environment, the same way in every benchmark.

/** A positive integer from `name`, or `fallback` when unset or empty. */
export function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  // A typo must not silently become NaN rounds or 0 iterations: refuse it loudly.
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

/** A comma-separated list from `name`; unset or blank is undefined (meaning: all). */
export function list(name: string): readonly string[] | undefined {
  const raw = process.env[name]?.trim();
  return raw ? raw.split(",").map((s) => s.trim()).filter(Boolean) : undefined;
}
