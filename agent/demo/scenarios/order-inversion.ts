// A lock-order inversion: checkout's "orders-lock" and "stock-lock" (cap 1 each, with
// detectOrderInversions). placeOrder() takes orders then stock; the restock job takes stock
// then orders. Both orders in one process is a deadlock waiting to happen (rule
// `order_inversion`, with both stacks). It never actually deadlocks here: the job runs rarely,
// the inner acquires have timeouts, and a collision costs one of them a timeout, not the process.
// The agent reports a pair once per pair of semaphores; the scenario recreates the two locks
// every cycleMs so the inversion is found (and, once acknowledged, raised) again.
import { Semaphore } from "../../src/index.js";
import { arrivals, latency, type Scenario, type ScenarioContext } from "../runtime.js";

export const ORDER_INVERSION = {
  orders: "orders-lock",
  stock: "stock-lock",
  ratePerSec: 1.5,
  innerTimeoutMs: 1000,
  /** The restock job's first run, then one every periodMs ± 20 % (divided by speed). */
  firstJobMs: 4000,
  jobPeriodMs: 15_000,
  /** The locks are recreated this often (divided by speed), which re-arms the detection. */
  recycleMs: 180_000,
} as const;

interface Locks {
  orders: Semaphore;
  stock: Semaphore;
}

function createLocks(): Locks {
  return {
    orders: new Semaphore({ name: ORDER_INVERSION.orders, permits: 1, acquireTimeoutMs: 2000, detectOrderInversions: true }),
    stock: new Semaphore({ name: ORDER_INVERSION.stock, permits: 1, acquireTimeoutMs: 2000, detectOrderInversions: true }),
  };
}

export function start(ctx: ScenarioContext): Scenario {
  const { timers, speed } = ctx;
  let locks = createLocks();
  let inFlight = 0;
  let recycling = false;

  async function placeOrder(locks: Locks): Promise<void> {
    const order = await locks.orders.acquire();
    try {
      await timers.sleep(latency(5, 0.4)); // INSERT INTO orders ...
      const stock = await locks.stock.acquire({ timeoutMs: ORDER_INVERSION.innerTimeoutMs });
      try {
        await timers.sleep(latency(4, 0.4)); // UPDATE stock SET reserved = reserved + 1 ...
      } finally {
        stock.release();
      }
    } finally {
      order.release();
    }
  }

  async function restockJob(locks: Locks): Promise<void> {
    const stock = await locks.stock.acquire();
    try {
      await timers.sleep(latency(15, 0.3)); // UPDATE stock SET on_hand = on_hand + delivered ...
      const orders = await locks.orders.acquire({ timeoutMs: ORDER_INVERSION.innerTimeoutMs });
      try {
        await timers.sleep(latency(10, 0.3)); // UPDATE orders SET status = 'ready' WHERE backordered ...
      } finally {
        orders.release();
      }
    } finally {
      stock.release();
    }
  }

  async function run(what: string, job: (l: Locks) => Promise<void>): Promise<void> {
    if (recycling) return;
    inFlight++;
    try {
      await job(locks);
    } catch (err) {
      ctx.log(`${what}: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      inFlight--;
    }
  }

  arrivals(timers, () => ORDER_INVERSION.ratePerSec, () => run("place order", placeOrder));
  timers.every(ORDER_INVERSION.firstJobMs / speed, ORDER_INVERSION.jobPeriodMs / speed, 0.2, () => void run("restock job", restockJob));

  // Recreate both locks between requests: close and create in one synchronous step, so the hub
  // sees the same two semaphores throughout.
  const recycle = (): void => {
    if (inFlight > 0) {
      recycling = true;
      timers.after(20, recycle);
      return;
    }
    void locks.orders.close();
    void locks.stock.close();
    locks = createLocks();
    recycling = false;
  };
  timers.every(ORDER_INVERSION.recycleMs / speed, ORDER_INVERSION.recycleMs / speed, 0, recycle);
  return { stop: () => timers.stop() };
}
