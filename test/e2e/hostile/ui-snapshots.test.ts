// Dashboards asking for snapshots of a hub at its design scale (10,000 semaphores, ~6 MB a
// snapshot; issue 28, item 1): one connection asking for 30 at once, and 100 connections at once
// from one address. Neither may hold the hub: an honest agent's batches are all acknowledged, in
// order, while it happens; /healthz answers; memory stays bounded; and what is refused is refused
// with a reason a page can show.
import { io, type Socket } from "socket.io-client";
import { afterEach, describe, expect, it } from "vitest";
import { UI_LIMITS, type UiSnapshot } from "../../../shared/ui-protocol/index.js";
import { cleanupAll, onCleanup, startHubChild, startService } from "../stream/harness.js";
import { atScale, expectStreamWhole, probeHealth, SCALE_OPTIONS, SEMAPHORES } from "./harness.js";

afterEach(cleanupAll);

/** The honest agent's sampling interval. */
const INTERVAL_MS = 200;
/** Memory the siege may add to the hub (RSS after a GC): a few snapshots' worth, not one per request. */
const MAX_GROWTH_BYTES = 256 * 1024 * 1024;

type Opened = { socket: Socket; snapshot: Promise<UiSnapshot> } | { refused: string };
type Answer = { ok: boolean; error?: string; snapshot?: UiSnapshot };

/** A dashboard connection; its first snapshot arrives once built (a slice at a time). */
function dashboard(url: string): Promise<Opened> {
  const socket = io(`${url}/ui`, { forceNew: true, reconnection: false, transports: ["websocket"], auth: { protocol: 1 } });
  onCleanup(() => socket.disconnect());
  const snapshot = new Promise<UiSnapshot>((resolve) => socket.once("snapshot", resolve));
  return new Promise((resolve) => {
    socket.once("connect", () => resolve({ socket, snapshot }));
    socket.once("connect_error", (err) => resolve({ refused: err.message }));
  });
}

/**
 * A hub child at scale with an honest agent (the real agent library, acks reported as they come)
 * and /healthz probed. `held()` ends the window and checks what the protocol promises over it.
 */
async function besieged(): Promise<{ url: string; held(): Promise<void> }> {
  const hub = await startHubChild(SCALE_OPTIONS);
  await atScale(hub.url);
  const before = await hub.mem();
  const honest = await startService({ url: hub.url, service: "honest", instance: "h-1", intervalMs: INTERVAL_MS, scenarios: ["steady:10"], notifyAcks: true });
  await honest.next("ack");
  const health = probeHealth(hub.url);
  const from = Date.now();
  return {
    url: hub.url,
    held: async () => {
      const to = Date.now();
      const { late, asked } = await health.stop();
      expect(late, `/healthz late or failing (${late.length} of ${asked})`).toEqual([]);
      expectStreamWhole(honest, INTERVAL_MS, from, to);
      expect((await hub.mem()).rss - before.rss).toBeLessThan(MAX_GROWTH_BYTES);
    },
  };
}

describe("dashboards asking for snapshots of 10,000 semaphores", () => {
  it("one connection asking for 30 at once: the hub goes on serving, and answers each with a snapshot or a rate refusal", async () => {
    const { url, held } = await besieged();
    const d = await dashboard(url);
    if ("refused" in d) throw new Error(`refused: ${d.refused}`);
    expect((await d.snapshot).state.semaphores.length).toBeGreaterThanOrEqual(SEMAPHORES);
    const answers = (await Promise.all(Array.from({ length: 30 }, () => d.socket.timeout(120_000).emitWithAck("snapshot:get", {})))) as Answer[];
    await held();
    // A snapshot is charged by what it costs: the request burst does not buy 30 of them.
    const ok = answers.filter((a) => a.ok);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(ok.length).toBeLessThan(30);
    for (const a of ok) expect(a.snapshot?.state.semaphores.length).toBeGreaterThanOrEqual(SEMAPHORES);
    for (const a of answers.filter((x) => !x.ok)) expect(a.error).toBe("rate limit exceeded");
  }, 300_000);

  it("one connection asking for the fleet 100 times at once: charged as a snapshot is, so the hub goes on serving", async () => {
    const { url, held } = await besieged();
    const d = await dashboard(url);
    if ("refused" in d) throw new Error(`refused: ${d.refused}`);
    await d.snapshot;
    const answers = (await Promise.all(Array.from({ length: 100 }, () => d.socket.timeout(120_000).emitWithAck("fleet:get", {})))) as { ok: boolean; error?: string; fleet?: unknown[] }[];
    await held();
    const ok = answers.filter((a) => a.ok);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(ok.length).toBeLessThan(10);
    for (const a of ok) expect(a.fleet?.length).toBeGreaterThan(0);
    for (const a of answers.filter((x) => !x.ok)) expect(a.error).toBe("rate limit exceeded");
  }, 300_000);

  it("100 connections at once: those over the caps are refused with a reason, the rest get their snapshots, and the hub goes on serving", async () => {
    const { url, held } = await besieged();
    const opened = await Promise.all(Array.from({ length: 100 }, () => dashboard(url)));
    const admitted = opened.flatMap((o) => ("socket" in o ? [o] : []));
    const refusals = opened.flatMap((o) => ("refused" in o ? [o.refused] : []));
    expect(admitted.length).toBeGreaterThanOrEqual(1);
    expect(admitted.length).toBeLessThanOrEqual(UI_LIMITS.maxClientsPerAddress);
    for (const why of refusals) expect(why).toMatch(/^too many dashboard/);
    const answers = await Promise.all(
      admitted.map(async (d) => {
        expect((await d.snapshot).state.semaphores.length).toBeGreaterThanOrEqual(SEMAPHORES);
        return (await d.socket.timeout(120_000).emitWithAck("snapshot:get", {})) as Answer;
      }),
    );
    await held();
    for (const a of answers) if (!a.ok) expect(a.error).toBe("rate limit exceeded");
    expect(answers.filter((a) => a.ok).length).toBeGreaterThanOrEqual(1);
  }, 300_000);
});
