// An event storm (a double release in a hot loop) costs the host O(1) per event and loses the
// excess, counted, instead of growing the agent's memory or its flush work.
import { afterEach, describe, expect, it } from "vitest";
import { connect, Semaphore } from "../../../agent/src/index.js";
import { EVENT_RING_CAPACITY } from "../../../agent/src/reporter/event-pipe.js";
import { FakeHub, waitUntil } from "./fake-hub.js";

const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()?.();
});

describe("an event storm", () => {
  it("delivers what fits, counts the rest, and keeps the count exact", async () => {
    const hub = await new FakeHub().start();
    cleanup.push(() => hub.stop());
    const db = new Semaphore({ name: "storm-db", permits: 1 });
    cleanup.push(() => db.close());
    const agent = connect({ url: hub.url, service: "svc", intervalMs: 50 });
    cleanup.push(() => agent.close());
    await waitUntil(() => agent.connected, "connected");

    const p = await db.acquire();
    p.release();
    const storm = 5 * EVENT_RING_CAPACITY;
    const start = performance.now();
    for (let i = 0; i < storm; i++) p.release();
    const perCallUs = ((performance.now() - start) * 1000) / storm;

    await waitUntil(() => hub.events.length + agent.status().droppedEvents === storm, "every event delivered or counted");
    expect(hub.events.length).toBe(EVENT_RING_CAPACITY);
    expect(agent.status().droppedEvents).toBe(storm - EVENT_RING_CAPACITY);
    expect(hub.events.every((e) => e.type === "double_release" && e.id === "storm-db")).toBe(true);
    // Each double release captures a stack (the semaphore's cost, not the agent's); generous bound.
    expect(perCallUs).toBeLessThan(500);
    expect(hub.invalid).toEqual([]);
  });
});
