// The deterministic split of a budget among live replicas: every replica computes it from the
// same member list, so the shares add up to the budget without any replica asking another.

/** Each member's share, in `members`' sorted order: floor(budget / n), plus one for the first `budget mod n`. */
export function splitBudget(budget: number, members: readonly string[]): Map<string, number> {
  const sorted = sortMembers(members);
  const n = sorted.length;
  const out = new Map<string, number>();
  if (n === 0) return out;
  const base = Math.floor(budget / n);
  const extra = budget % n;
  sorted.forEach((m, i) => out.set(m, base + (i < extra ? 1 : 0)));
  return out;
}

/**
 * One replica's share; at least 1, because a Semaphore cannot grant with 0 permits (a fleet with
 * more live replicas than the budget then sums past it, which the sample says: replicas > budget).
 */
export function shareOf(budget: number, members: readonly string[], me: string): number {
  const s = splitBudget(budget, members.includes(me) ? members : [...members, me]).get(me) ?? budget;
  return Math.max(1, s);
}

/** Code-unit order, the same on every replica whatever its locale; duplicates dropped. */
export function sortMembers(members: readonly string[]): string[] {
  return [...new Set(members)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
