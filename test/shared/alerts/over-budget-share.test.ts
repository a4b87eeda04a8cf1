// over_budget on replicas that split their budget (share: "replicas"): the documented moment a
// starting replica's first permit sums past the budget, while the others still count the old
// membership, raises nothing; an over-budget the replicas all agree on (more replicas than the
// budget) or one kept by a replica that cannot reach the coordinator is raised.
import { describe, expect, it } from "vitest";
import { AlertEngine } from "../../../shared/alerts/index.js";
import type { SampleShare } from "../../../shared/protocol/types.js";
import { info, sample, ScriptedAgent } from "./helpers.js";

const share = (replicas: number, target: number, reachable = true): SampleShare => ({ budget: 20, replicas, target, reachable });
const overBudget = (engine: AlertEngine) => engine.activeAlerts().filter((a) => a.rule === "over_budget");

function fleet(engine: AlertEngine, n: number, from = 1): ScriptedAgent[] {
  return Array.from({ length: n }, (_, i) => {
    const r = new ScriptedAgent(engine, `agent-${i + from}`, "checkout", `web-${i + from}`);
    r.hello();
    r.register([info("db", { budget: 20, cap: 1, share: "replicas" })]);
    return r;
  });
}

describe("over_budget with a split budget", () => {
  it("raises nothing while a fifth replica joins four at 5 each, and nothing once they settle at 4", () => {
    const engine = new AlertEngine();
    const rs = fleet(engine, 4);
    for (const r of rs) r.send([sample("db", { cap: 5, available: 5, share: share(4, 5) })]);
    expect(overBudget(engine)).toEqual([]);
    const [joiner] = fleet(engine, 1, 5);
    // The joiner at 1 (its first permit) while the others still count four: 21 > 20.
    joiner.send([sample("db", { cap: 1, available: 1, share: share(5, 4) })]);
    expect(engine.fleet()[0]).toMatchObject({ cap: 21, overBudget: false });
    expect(overBudget(engine)).toEqual([]);
    for (const r of rs) r.send([sample("db", { cap: 4, available: 4, share: share(5, 4) })]);
    joiner.send([sample("db", { cap: 4, available: 4, share: share(5, 4) })]);
    expect(engine.fleet()[0]).toMatchObject({ cap: 20, overBudget: false });
    // Never raised on the way, not even for a moment (the joiner's register came before its first sample).
    expect(engine.allAlerts().filter((a) => a.rule === "over_budget")).toEqual([]);
  });

  it("raises it when the replicas agree and still sum past the budget, or one cannot reach the coordinator", () => {
    const engine = new AlertEngine();
    const rs = fleet(engine, 3);
    for (const r of rs) r.send([sample("db", { cap: 7, available: 7, share: share(3, 7) })]);
    expect(overBudget(engine)).toHaveLength(1);

    const engine2 = new AlertEngine();
    const [a, b, c] = fleet(engine2, 3);
    a.send([sample("db", { cap: 7, available: 7, share: share(3, 7) })]);
    b.send([sample("db", { cap: 7, available: 7, share: share(3, 7) })]);
    c.send([sample("db", { cap: 6, available: 6, share: share(3, 6) })]);
    expect(overBudget(engine2)).toEqual([]);
    // c is cut off and keeps 6 while a and b, counting two, grow to 10 each.
    c.send([sample("db", { cap: 6, available: 6, share: share(3, 6, false) })]);
    a.send([sample("db", { cap: 10, available: 10, share: share(2, 10) })]);
    b.send([sample("db", { cap: 10, available: 10, share: share(2, 10) })]);
    expect(overBudget(engine2)).toHaveLength(1);
  });
});
