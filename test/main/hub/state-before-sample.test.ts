// A semaphore registered but not yet sampled: GET /api/state reports its gauges as null (unknown,
// not "0 in use, all available") until the first sample arrives (docs/protocol.md, /api/state).
import { afterEach, describe, expect, it } from "vitest";
import type { ApiHubState } from "../../../shared/protocol/index.js";
import { agent, cleanupAll, getJson, info, request, sample, startHub, T0, waitUntil, type AckAnswer } from "./helpers.js";

afterEach(cleanupAll);

describe("GET /api/state before a semaphore's first sample", () => {
  it("reports null gauges with the registered cap, then the sample's numbers", async () => {
    const hub = await startHub({ now: () => T0 });
    const s = await agent(hub, "a1", [info("db", { cap: 10 })]);
    const db = async () => (await getJson<ApiHubState>(hub, "/api/state")).body.semaphores.find((x) => x.id === "db");

    await waitUntil(async () => (await db()) !== undefined, "the registered semaphore");
    expect(await db()).toMatchObject({ cap: 10, inUse: null, available: null, waiters: null, oldestWaitMs: null, last: null });

    expect(await request<AckAnswer>(s, "samples", { seq: 0, t: T0, intervalMs: 1000, items: [sample("db", { inUse: 3, waiters: 1, oldestWaitMs: 40 })] })).toMatchObject({ ok: true });
    await waitUntil(async () => (await db())?.last !== null, "the first sample");
    expect(await db()).toMatchObject({ cap: 10, inUse: 3, available: 7, waiters: 1, oldestWaitMs: 40 });
  });
});
