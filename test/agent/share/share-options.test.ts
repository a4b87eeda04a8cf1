// Bad options for a shared budget are refused at construction with an error naming what is
// wrong, and nothing is left registered (the name stays free).
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { Semaphore } from "../../../agent/src/index.js";

// Never connected: construction must fail before any command is sent.
const redis = new Redis({ lazyConnect: true });
afterAll(() => redis.disconnect());

const make = (o: Record<string, unknown>) => () => new Semaphore({ name: "shared-opts", ...o } as never);

describe("share: \"replicas\" options", () => {
  it("needs a budget and a coordinator with a Redis client", () => {
    expect(make({ share: "replicas", coordinator: { redis } })).toThrow(/set budget too/);
    expect(make({ share: "replicas", budget: 10 })).toThrow(/needs a coordinator/);
    expect(make({ share: "replicas", budget: 10, coordinator: { redis: {} } })).toThrow(/coordinator.redis must be an ioredis client/);
    expect(make({ share: "everyone", budget: 10, coordinator: { redis } })).toThrow(/share must be "replicas"/);
    expect(make({ permits: 5, coordinator: { redis } })).toThrow(/coordinator is for share: "replicas"/);
  });

  it("refuses lease and heartbeat settings that could not work", () => {
    expect(make({ share: "replicas", budget: 10, coordinator: { redis, leaseMs: 50 } })).toThrow(RangeError);
    expect(make({ share: "replicas", budget: 10, coordinator: { redis, leaseMs: 1000, heartbeatMs: 1000 } })).toThrow(/below leaseMs/);
    expect(make({ share: "replicas", budget: 10, coordinator: { redis, timeoutMs: -1 } })).toThrow(RangeError);
    expect(make({ share: "replicas", budget: 10, coordinator: { redis, service: "" } })).toThrow(/coordinator.service/);
    expect(make({ share: "replicas", budget: 10, coordinator: { redis, leaseMs: 1000, turnMs: 1999 } })).toThrow(/turnMs must be ≥ 2 × leaseMs \(2000\)/);
    expect(make({ share: "replicas", budget: 10, coordinator: { redis, turnMs: "soon" } })).toThrow(/coordinator.turnMs/);
  });

  it("refuses starting permits above the budget, and leaves the name free after any refusal", () => {
    expect(make({ share: "replicas", budget: 10, permits: 11, coordinator: { redis } })).toThrow(/must not exceed the shared budget/);
    const ok = new Semaphore({ name: "shared-opts", permits: 2 });
    expect(ok.permits).toBe(2);
    void ok.close();
  });
});
