// The one error instrument() throws for a target it does not understand, so a version the adapter
// was not written for fails loudly at start-up instead of reporting nonsense later.

export class SemscopeAdapterError extends Error {
  override readonly name = "SemscopeAdapterError";
  readonly code = "SEMSCOPE_ADAPTER";
  constructor(
    /** The package the target looks like ("pg", "generic-pool", ...), or "unknown". */
    readonly pkg: string,
    reason: string,
    /** The versions the adapter understands, e.g. "pg 8.x (pg-pool 3.x)". */
    readonly understands?: string,
  ) {
    super(`instrument(${pkg}): ${reason}${understands !== undefined ? ` (the adapter understands ${understands})` : ""}`);
  }
}

/** Each listed member must have the listed type; the first that does not is named in the error. */
export function requireShape(pkg: string, understands: string, target: object, shape: Readonly<Record<string, "function" | "number" | "object" | "boolean">>): void {
  for (const [key, type] of Object.entries(shape)) {
    const v = (target as Record<string, unknown>)[key];
    const actual = v === null ? "null" : typeof v;
    if (actual !== type) {
      throw new SemscopeAdapterError(pkg, `this target has no ${type} "${key}" (found ${actual}): not a version this adapter was written for`, understands);
    }
  }
}

/** The wrappers go on the target as own properties: refuse at once, with nothing installed, if they cannot. */
export function requirePatchable(pkg: string, understands: string, target: object, keys: readonly string[]): void {
  for (const key of keys) {
    const own = Object.getOwnPropertyDescriptor(target, key);
    const ok = own === undefined ? Object.isExtensible(target) : own.configurable === true;
    if (!ok) throw new SemscopeAdapterError(pkg, `cannot wrap "${key}": the target is frozen, sealed or not extensible`, understands);
  }
}
