// The AlertBook keeps each target's `active` bits (RULE_BIT) as it raises and resolves: a tracker
// passes over a rule whose bit is clear when the sample is quiet for it, so a bit left clear while
// the alert is active would keep that alert from ever resolving.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AlertBook, RULE_BIT } from "../../../shared/alerts/alert-book.js";
import type { AlertTarget } from "../../../shared/alerts/index.js";
import type { AlertRule } from "../../../shared/protocol/types.js";

const RULES = Object.keys(RULE_BIT) as AlertRule[];

type Op =
  | { kind: "raise"; rule: AlertRule; target: number; at: number }
  | { kind: "resolve"; rule: AlertRule; target: number; at: number }
  | { kind: "acknowledge"; pick: number; resolve: boolean; at: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant("raise" as const), rule: fc.constantFrom(...RULES), target: fc.nat(3), at: fc.nat(100) }),
  fc.record({ kind: fc.constant("resolve" as const), rule: fc.constantFrom(...RULES), target: fc.nat(3), at: fc.nat(100) }),
  fc.record({ kind: fc.constant("acknowledge" as const), pick: fc.nat(), resolve: fc.boolean(), at: fc.nat(100) }),
);

describe("AlertBook: a target's active bits", () => {
  it("are exactly the rules with an alert active on it, after any raises, resolutions and acknowledgements", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const book = new AlertBook(5);
        const targets: AlertTarget[] = [0, 1, 2, 3].map((i) => ({ key: `svc/web-${i}/db`, service: "svc", instance: `web-${i}`, semaphore: "db", active: 0 }));
        const ids: string[] = [];
        for (const o of ops) {
          if (o.kind === "raise") ids.push(book.raise(targets[o.target], { rule: o.rule, severity: "warning", message: "m" }, o.at).id);
          else if (o.kind === "resolve") book.resolve(o.rule, targets[o.target].key, o.at);
          else if (ids.length > 0) book.acknowledge(ids[o.pick % ids.length], o.resolve ? o.at : undefined);
          for (const t of targets) {
            let expected = 0;
            for (const rule of RULES) if (book.get(rule, t.key) !== undefined) expected |= RULE_BIT[rule];
            expect(t.active).toBe(expected);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it("gives every rule a bit of its own", () => {
    const bits = RULES.map((r) => RULE_BIT[r]);
    expect(new Set(bits).size).toBe(RULES.length);
    for (const b of bits) expect(b & (b - 1)).toBe(0);
  });
});
