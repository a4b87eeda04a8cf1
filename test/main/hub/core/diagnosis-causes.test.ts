// Which starvation alerts the hub diagnoses (alert-evidence.ts): one where waiters are passed over
// for permits others hold gets the Little's-law diagnosis, and so does one with permits free (a
// weighted acquire may want more than is free); one raised while the pool opens connections is
// about connections not opening, and a diagnosis naming an N or a slow downstream would send the
// user to the wrong fix.
import { describe, expect, it } from "vitest";
import { AgentSession } from "../../../../main/hub/ingest/agent-session.js";
import { HubCore } from "../../../../main/hub/core/hub-core.js";
import type { Alert, Sample } from "../../../../shared/protocol/index.js";
import { many } from "../../../fixtures/protocol.js";
import { hello, info, sample, summaryOf, T0 } from "../helpers.js";

const CAP = 4;

/** Second `s` of a waiter that has waited since second 0, with `over` on top (hold p99 100 ms). */
const starving = (id: string, s: number, over: Partial<Sample>) =>
  sample(id, { cap: CAP, waiters: 3, acquired: 20, released: 20, oldestWaitMs: s * 1000, waitMs: summaryOf(...many(20, 300)), holdMs: summaryOf(...many(20, 100)), ...over });

describe("diagnoses of starvation alerts", () => {
  it("diagnoses waiters passed over for held permits or beside free ones, and not waiters behind connections being opened", () => {
    let clock = T0;
    const core = new HubCore({ now: () => clock, version: "t", thresholds: {}, maxHistories: 10, forgetAfterMs: 0, recorder: undefined });
    const session = new AgentSession(core, 1, { perSecond: 1e9, burst: 1e9 });
    expect(session.handle("hello", hello("a1", { service: "shop", instance: "web-1" })).ok).toBe(true);
    expect(session.handle("register", { semaphores: ["held", "opening", "free"].map((id) => info(id, { cap: CAP, queue: "lifo" })) }).ok).toBe(true);
    for (let s = 1; s <= 40; s++) {
      clock = T0 + s * 1000;
      const items = [
        starving("held", s, { inUse: CAP, available: 0 }),
        starving("opening", s, { inUse: 1, available: 0, opening: 3 }),
        starving("free", s, { inUse: 1, available: 3 }),
      ];
      expect(session.handle("samples", { seq: s, t: clock, intervalMs: 1000, items }).ok).toBe(true);
    }
    const starvation = new Map<string, Alert>(core.engine.activeAlerts().filter((a) => a.rule === "starvation").map((a) => [a.key.split("/").pop()!, a]));
    expect([...starvation.keys()].sort()).toEqual(["free", "held", "opening"]);
    expect(starvation.get("held")!.evidence?.["cause"]).toBe("passed_over");
    expect(starvation.get("held")!.evidence?.["diagnosis"]).toBeDefined();
    expect(starvation.get("opening")!.evidence?.["cause"]).toBe("opening");
    expect(starvation.get("opening")!.evidence?.["diagnosis"]).toBeUndefined();
    expect(starvation.get("free")!.evidence?.["cause"]).toBe("permits_free");
    expect(starvation.get("free")!.evidence?.["diagnosis"]).toBeDefined();
  });
});
