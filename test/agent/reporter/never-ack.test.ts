// A hub that takes every message and never acks: the agent must keep its memory bounded, not
// flood the hub, and stay out of the host's way (event loop responsive, semaphores working).
import { monitorEventLoopDelay } from "node:perf_hooks";
import { afterEach, describe, expect, it } from "vitest";
import { connect, Semaphore } from "../../../agent/src/index.js";
import { MAX_IN_FLIGHT } from "../../../agent/src/reporter/outbox.js";
import { FakeHub, waitUntil } from "./fake-hub.js";

const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()?.();
});

describe("a hub that never acks", () => {
  it.each([
    ["hello-only", "acks hello, then nothing"],
    ["never", "does not even ack hello"],
  ] as const)("(%s: %s) leaves the agent's memory bounded and the host's event loop unblocked", async (ackMode, _what) => {
    const hub = await new FakeHub({ ackMode }).start();
    cleanup.push(() => hub.stop());
    const sems = Array.from({ length: 20 }, (_, i) => new Semaphore({ name: `never-ack-${i}`, permits: 4 }));
    cleanup.push(() => Promise.all(sems.map((s) => s.close())));
    const bufferBatches = 50;
    const agent = connect({ url: hub.url, service: "svc", intervalMs: 10, bufferBatches });
    cleanup.push(() => agent.close());
    await waitUntil(() => hub.received("hello").length > 0, "hello");

    const heapBefore = process.memoryUsage().heapUsed;
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    let ops = 0;
    let maxBuffered = 0;
    let maxBytes = 0;
    const until = Date.now() + 3000;
    const watch = setInterval(() => {
      maxBuffered = Math.max(maxBuffered, agent.bufferedBatches);
      maxBytes = Math.max(maxBytes, agent.status().bufferedBytes);
    }, 5);
    await Promise.all(
      sems.map(async (s) => {
        while (Date.now() < until) {
          for (let i = 0; i < 20; i++) {
            const p = await s.acquire({ timeoutMs: 1000 });
            ops++;
            p.release();
          }
          // Yield to timers and I/O the way a real request handler would.
          await new Promise((r) => setImmediate(r));
        }
      }),
    );
    clearInterval(watch);
    delay.disable();

    const status = agent.status();
    expect(ops).toBeGreaterThan(10_000);
    expect(maxBuffered).toBeLessThanOrEqual(bufferBatches);
    expect(maxBytes).toBeLessThan(2 * 1024 * 1024);
    // Hundreds of intervals into a buffer of 50: the oldest are dropped and counted.
    expect(status.dropped).toBeGreaterThan(50);
    expect(status.connected).toBe(ackMode === "hello-only");
    // Never more than the in-flight window outstanding: a silent hub is not flooded.
    expect(hub.received("samples").length).toBeLessThanOrEqual(MAX_IN_FLIGHT);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(64 * 1024 * 1024);
    // The host's loop keeps turning: a loop blocked on the hub would show delays of seconds. The
    // bounds are loose because a busy CI box alone adds tens of ms (an interval's work for 20
    // semaphores is ~1 ms here).
    expect(delay.percentile(99) / 1e6).toBeLessThan(250);
    expect(delay.max / 1e6).toBeLessThan(1000);
    expect(hub.invalid).toEqual([]);
  });
});
