// A permit leak from an error path: checkout's "payments-db" pool. chargeCard() takes a
// connection, calls the payment gateway, and releases the connection after the call, with no
// try/finally. Every so often the gateway throws, the release is skipped, and the connection is
// gone: after leakThresholdMs the agent reports the holder with the stack of the acquire below
// (rule `leak`), and after leaseTimeoutMs the lease takes the permit back (leak_resolved), so
// the pool recovers and the alert resolves until the next failure. At most
// leaseTimeoutMs / periodMs permits are ever leaked at once.
import { Semaphore } from "../../src/index.js";
import { arrivals, DownstreamError, FaultSchedule, latency, type Scenario, type ScenarioContext } from "../runtime.js";

export const LEAKING_POOL = {
  name: "payments-db",
  permits: 8,
  ratePerSec: 3,
  /** Reported after this long (divided by speed). */
  leakThresholdMs: 3000,
  /** Taken back after this long (divided by speed). */
  leaseTimeoutMs: 20_000,
  /** The gateway's first failure, then one every periodMs ± 20 % (divided by speed). */
  firstFailureMs: 2000,
  failurePeriodMs: 25_000,
} as const;

export function start(ctx: ScenarioContext): Scenario {
  const { timers, speed } = ctx;
  const pool = new Semaphore({
    name: LEAKING_POOL.name,
    permits: LEAKING_POOL.permits,
    acquireTimeoutMs: 5000,
    leakThresholdMs: LEAKING_POOL.leakThresholdMs / speed,
    leaseTimeoutMs: LEAKING_POOL.leaseTimeoutMs / speed,
  });
  const gatewayFails = new FaultSchedule(timers, LEAKING_POOL.firstFailureMs / speed, LEAKING_POOL.failurePeriodMs / speed);

  async function gateway(amountCents: number): Promise<string> {
    await timers.sleep(latency(45, 0.4, 10, 250));
    if (gatewayFails.due()) throw new DownstreamError("payment gateway", `card declined (${amountCents} cents): upstream 502`);
    return `ch_${Math.random().toString(36).slice(2, 10)}`;
  }

  async function chargeCard(orderId: number): Promise<void> {
    const conn = await pool.acquire();
    await timers.sleep(latency(6, 0.4)); // SELECT ... FOR UPDATE on the order row
    const chargeId = await gateway(1000 + (orderId % 9000));
    await timers.sleep(latency(4, 0.4)); // UPDATE orders SET charge_id = ...
    void chargeId;
    conn.release(); // BUG: skipped when gateway() throws; this belongs in a finally block
  }

  let orders = 0;
  arrivals(
    timers,
    () => LEAKING_POOL.ratePerSec,
    async () => {
      const id = ++orders;
      try {
        await chargeCard(id);
      } catch (err) {
        // The request handler logs the failure and answers 502; nobody notices the connection.
        ctx.log(`order ${id}: ${err instanceof Error ? err.message : String(err)}`);
      }
    },
  );
  return { stop: () => timers.stop() };
}
