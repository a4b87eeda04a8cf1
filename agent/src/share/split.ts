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
 * One replica's share. With more live replicas than the budget, `budget` of them hold 1 permit
 * and the others 0, and the holders rotate with `turn` (the same number on every replica, from
 * the coordinator's clock): turn t gives the permits to the `budget` members after the first
 * t × budget in sorted order, wrapping, so every replica holds one for a turn in n / budget.
 */
export function shareOf(budget: number, members: readonly string[], me: string, turn = 0): number {
  const all = members.includes(me) ? members : [...members, me];
  const sorted = sortMembers(all);
  const n = sorted.length;
  if (n <= budget) return splitBudget(budget, sorted).get(me) ?? budget;
  const offset = ((turn % n) * budget) % n;
  return (sorted.indexOf(me) - offset + n) % n < budget ? 1 : 0;
}

/** Code-unit order, the same on every replica whatever its locale; duplicates dropped. */
export function sortMembers(members: readonly string[]): string[] {
  return [...new Set(members)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
