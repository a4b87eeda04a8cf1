// The thresholds a user overrode, after a change made on the running hub (a dashboard's rules
// panel): settings keep overrides only, so a field set back to its default leaves them.
import { DEFAULT_THRESHOLDS, type ThresholdsPatch } from "../../shared/alerts/index.js";

type Groups = Record<string, Record<string, number> | undefined>;

/** `overrides` with `patch` applied: a field at the protocol's default is dropped, any other set; an emptied group goes. */
export function overridesAfter(overrides: ThresholdsPatch, patch: ThresholdsPatch): ThresholdsPatch {
  const out: Record<string, Record<string, number>> = {};
  for (const [group, fields] of Object.entries(overrides as Groups)) if (fields !== undefined) out[group] = { ...fields };
  const defaults = DEFAULT_THRESHOLDS as unknown as Groups;
  for (const [group, fields] of Object.entries(patch as Groups)) {
    for (const [field, value] of Object.entries(fields ?? {})) {
      const g = (out[group] ??= {});
      if (defaults[group]?.[field] === value) delete g[field];
      else g[field] = value;
      if (Object.keys(g).length === 0) delete out[group];
    }
  }
  return out as ThresholdsPatch;
}

/** The same overrides, whatever order their groups and fields were written in. */
export function sameOverrides(a: ThresholdsPatch, b: ThresholdsPatch): boolean {
  const canon = (p: ThresholdsPatch) =>
    JSON.stringify(
      Object.entries(p as Groups)
        .filter(([, f]) => f !== undefined && Object.keys(f).length > 0)
        .map(([g, f]) => [g, Object.entries(f ?? {}).sort(([x], [y]) => x.localeCompare(y))])
        .sort(([x], [y]) => String(x).localeCompare(String(y))),
    );
  return canon(a) === canon(b);
}
