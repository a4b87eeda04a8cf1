// A /ui delta's semaphore entries: what a sample changed, rebuilt by the dashboard into the whole
// entry it would have had from a snapshot.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applyPatch, toPatch, UI_GAUGE_FIELDS, UI_IDENTITY_FIELDS, type UiSemaphore } from "../../../shared/ui-protocol/index.js";
import { makeSample, T0 } from "../../fixtures/protocol.js";

function semaphore(over: Partial<UiSemaphore> = {}): UiSemaphore {
  const last = makeSample({ id: "db", cap: 10, inUse: 4, waiters: 2, oldestWaitMs: 30 });
  return {
    key: "checkout/web-1/db",
    agentId: "agent-1",
    service: "checkout",
    instance: "web-1",
    id: "db",
    name: "db",
    kind: "pg-pool",
    cap: 10,
    inUse: 4,
    available: 6,
    waiters: 2,
    oldestWaitMs: 30,
    status: "saturated",
    t: T0,
    last,
    ...over,
  };
}

const config = { kind: "pg-pool", queue: "fifo", maxWaiters: null, acquireTimeoutMs: 2000, leaseTimeoutMs: null, leakThresholdMs: 30_000, scope: "process" } as const;

describe("toPatch", () => {
  it("leaves out the identity once sent and every gauge the sample repeats", () => {
    const p = toPatch(semaphore(), false);
    expect(Object.keys(p).sort()).toEqual(["key", "last", "status", "t"]);
    const first = toPatch(semaphore({ config }), true);
    for (const f of UI_IDENTITY_FIELDS) expect(first[f]).toBe(semaphore()[f]);
    expect(first.config).toEqual(config);
    for (const f of UI_GAUGE_FIELDS) expect(first).not.toHaveProperty(f);
  });

  it("keeps a gauge that differs from the sample, and every gauge without one", () => {
    expect(toPatch(semaphore({ cap: 12 }), false)).toMatchObject({ cap: 12 });
    expect(toPatch(semaphore({ cap: 12 }), false)).not.toHaveProperty("inUse");
    const unsampled = toPatch(semaphore({ last: null, t: null, inUse: 0, available: 10, waiters: 0, oldestWaitMs: 0 }), false);
    expect(unsampled).toMatchObject({ cap: 10, inUse: 0, available: 10, waiters: 0, oldestWaitMs: 0 });
  });
});

describe("applyPatch", () => {
  it("rebuilds the whole semaphore from the one held, whatever the patch left out", () => {
    const n = fc.nat({ max: 1000 });
    const identity = fc.record({ agentId: fc.string(), name: fc.string(), kind: fc.constantFrom("semaphore", "pg-pool") });
    const gauges = fc.record({ cap: n, inUse: n, available: n, waiters: n, oldestWaitMs: n });
    fc.assert(
      fc.property(identity, identity, gauges, gauges, fc.boolean(), fc.boolean(), fc.boolean(), (heldId, nowId, lastG, stateG, sampled, sendIdentity, withConfig) => {
        const held = semaphore({ ...heldId, config });
        const last = sampled ? makeSample({ id: "db", ...lastG }) : null;
        // Sampled, the hub's state repeats the sample's gauges except, at times, the registered cap.
        const g = sampled ? { ...lastG, cap: stateG.cap } : stateG;
        const now = semaphore({ ...nowId, ...g, last, t: sampled ? T0 + 1000 : null, status: "ok", ...(withConfig ? { config: { ...config, queue: "lifo" as const } } : {}) });
        const identityKnown = sendIdentity || (heldId.agentId === nowId.agentId && heldId.name === nowId.name && heldId.kind === nowId.kind);
        const got = applyPatch(held, toPatch(now, sendIdentity || !identityKnown));
        // A config is sent only when it changed: without one, the held config stays.
        expect(got).toEqual(withConfig ? now : { ...now, config });
      }),
    );
  });

  it("cannot make a semaphore it never held from a patch without its identity", () => {
    expect(applyPatch(undefined, toPatch(semaphore(), false))).toBeUndefined();
    expect(applyPatch(undefined, toPatch(semaphore(), true))).toEqual(semaphore());
  });

  it("takes a full entry (a snapshot's shape) as a patch", () => {
    const s = semaphore({ inUse: 5 });
    expect(applyPatch(semaphore({ config }), s)).toEqual({ ...s, config });
  });
});
