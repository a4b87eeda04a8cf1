// A tarn pool opening connections, instrumented and streamed by the real agent to a real hub: callers
// waiting behind creates that are merely slow raise no `starvation` (the same pool's caller passed
// over for held permits does), while creates that hang raise it with cause `opening`, and creates
// that keep failing (nothing pending between two attempts, permits free) with `permits_free`. The create functions are the pools' own: slow, never answering, or failing at once.
import { Pool as TarnPool } from "tarn";
import { afterEach, describe, expect, it } from "vitest";
import { connect, instrument } from "../../../agent/src/index.js";
import type { Alert, ApiHubState } from "../../../shared/protocol/index.js";
import { cleanupAll, getJson, onCleanup, startHub, waitUntil } from "../../main/hub/helpers.js";
import { sleep, uniqueName } from "./helpers.js";

afterEach(cleanupAll);

// Small numbers so the test runs in seconds: passed over after 300 ms, stuck opening after 2 s.
const THRESHOLDS = { starvation: { minWaitMs: 300, openingWaitMs: 2000, clearMs: 500 } };
const SERVICE = "tarn-opening";

type Hub = Awaited<ReturnType<typeof startHub>>;

async function starvation(hub: Hub, name: string): Promise<Alert[]> {
  const { body } = await getJson<{ alerts: Alert[] }>(hub, "/api/alerts");
  return body.alerts.filter((a) => a.rule === "starvation" && a.semaphore === name);
}

async function lastSample(hub: Hub, name: string): Promise<ApiHubState["semaphores"][number]["last"] | undefined> {
  return (await getJson<ApiHubState>(hub, "/api/state")).body.semaphores.find((x) => x.name === name)?.last;
}

function pool(create: () => Promise<object>, over: Partial<ConstructorParameters<typeof TarnPool<object>>[0]> = {}): TarnPool<object> {
  const p = new TarnPool<object>({ create, destroy: () => undefined, min: 0, max: 2, acquireTimeoutMillis: 30_000, ...over });
  onCleanup(() => p.destroy());
  return p;
}

async function setupHub(): Promise<Hub> {
  const hub = await startHub({ thresholds: THRESHOLDS });
  const agent = connect({ url: hub.url, service: SERVICE, instance: "t-1", intervalMs: 50 });
  onCleanup(() => agent.close());
  return hub;
}

describe("starvation on a tarn pool opening connections, on a real hub", () => {
  it("callers behind creates that are slow raise nothing; a caller passed over for held permits on the same pool does", async () => {
    const hub = await setupHub();
    const p = pool(async () => {
      await sleep(1200);
      return {};
    });
    const name = uniqueName("slow-open");
    const h = instrument(p, { name });
    onCleanup(() => h.untrack());

    // Two callers wait 1.2 s for the two connections being opened: past the 300 ms a caller
    // passed over for permits may wait, far within the 2 s a connect may take.
    const first = [p.acquire().promise, p.acquire().promise];
    let seen: { opening?: number; waiters: number; oldestWaitMs: number } | undefined;
    await waitUntil(async () => {
      const last = await lastSample(hub, name);
      if (last?.opening === undefined || last.oldestWaitMs < 600) return false;
      seen = { opening: last.opening, waiters: last.waiters, oldestWaitMs: last.oldestWaitMs };
      return true;
    }, "callers waiting 600 ms behind creates in /api/state", 10_000);
    expect(seen).toMatchObject({ opening: 2, waiters: 2 });
    const conns = await Promise.all(first);
    await waitUntil(async () => (await lastSample(hub, name))?.inUse === 2 && (await lastSample(hub, name))?.waiters === 0, "both connections lent", 5000);
    expect(await starvation(hub, name)).toEqual([]);

    // Both connections held: the next caller waits for a permit, not for a connection.
    const third = p.acquire().promise;
    await waitUntil(async () => (await starvation(hub, name)).length > 0, "starvation of a caller passed over for permits", 10_000);
    const [raised] = await starvation(hub, name);
    expect(raised.evidence).toMatchObject({ cause: "passed_over", inUse: 2, cap: 2, opening: 0 });
    for (const c of conns) p.release(c);
    p.release(await third);
    await waitUntil(async () => (await starvation(hub, name)).every((a) => a.resolvedAt != null), "starvation resolved", 10_000);
  }, 60_000);

  it("creates that hang, or keep failing, while callers wait raise starvation with cause `opening`, or `permits_free` between attempts", async () => {
    const hub = await setupHub();
    // Never answers while the test runs: the create stays pending (tarn times it out only after
    // createTimeoutMillis). Answered at cleanup, before destroy(), which waits for pending creates.
    let answer = (): void => undefined;
    const answered = new Promise<void>((r) => (answer = r));
    const hanging = pool(async () => answered.then(() => ({})), { createTimeoutMillis: 60_000 });
    onCleanup(answer);
    // Refused at once, retried every 300 ms: most samples fall between two attempts, nothing pending.
    const failing = pool(async () => Promise.reject(new Error("ECONNREFUSED")), { createRetryIntervalMillis: 300 });
    const hangName = uniqueName("hang-open");
    const failName = uniqueName("fail-open");
    const hh = instrument(hanging, { name: hangName });
    const hf = instrument(failing, { name: failName });
    onCleanup(() => hh.untrack());
    onCleanup(() => hf.untrack());
    // destroy() rejects them at the end.
    for (const op of [hanging.acquire(), failing.acquire()]) op.promise.catch(() => undefined);

    await waitUntil(async () => (await starvation(hub, hangName)).length > 0 && (await starvation(hub, failName)).length > 0, "starvation on both pools", 15_000);
    const [hang] = await starvation(hub, hangName);
    expect(hang.evidence).toMatchObject({ cause: "opening", opening: 1, inUse: 0, waiters: 1 });
    expect(hang.evidence?.oldestWaitMs).toBeGreaterThanOrEqual(2000);
    expect(hang.message).toContain("while the pool opens 1 connection");
    const [fail] = await starvation(hub, failName);
    // Each attempt fails at once: a sample almost never falls inside one.
    expect(fail.evidence).toMatchObject({ inUse: 0, waiters: 1 });
    expect(["permits_free", "opening"]).toContain(fail.evidence?.cause);
    expect(fail.message).toMatch(/connections (are not opening|failing to open)/);
  }, 60_000);
});
