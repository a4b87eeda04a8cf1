// The local cap that stands in while Redis is down (onRedisDown: "local"): weighted, so a
// MultiSemaphore takes its N permits there too, first come first served.
import { describe, expect, it } from "vitest";
import { LocalCap } from "../../../agent/src/adapters/redis-semaphore/local-cap.js";
import { flush } from "./helpers.js";

describe("redis-semaphore adapter: the local cap", () => {
  it("takes a MultiSemaphore's weight, lets nobody pass a queued heavier waiter, and hands released permits on in order", async () => {
    const cap = new LocalCap(4);
    expect(await cap.acquire(10_000, undefined, 3)).toBe(true);
    const order: string[] = [];
    const two = cap.acquire(10_000, undefined, 2).then((ok) => order.push(`two:${ok}`));
    const one = cap.acquire(10_000, undefined, 1).then((ok) => order.push(`one:${ok}`));
    await flush();
    // One permit is free, but the waiter of two is first: the waiter of one does not pass it.
    expect(order).toEqual([]);
    expect(cap.inUse).toBe(3);
    cap.release(3);
    await Promise.all([two, one]);
    expect(order).toEqual(["two:true", "one:true"]);
    expect(cap.inUse).toBe(3);
  });

  it("a heavy head that times out lets the lighter waiters behind it in", async () => {
    const cap = new LocalCap(2);
    expect(await cap.acquire(10_000)).toBe(true);
    const heavy = cap.acquire(20, undefined, 2);
    const light = cap.acquire(10_000);
    expect(await heavy).toBe(false);
    expect(await light).toBe(true);
    expect(cap.inUse).toBe(2);
  });
});
