// A replay shows what the live dashboard showed: the same alerts and the same chart data through
// the same /ui requests, at the end of a run with real agents in child processes, and at every
// checkpoint of a scripted run (seeking forward and back).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { io, type Socket } from "socket.io-client";
import { afterEach, describe, expect, it } from "vitest";
import { createReplayHub, type ReplayHub, type ReplayHubOptions } from "../../main/hub/recording/replay-hub.js";
import type { Hub } from "../../main/hub/index.js";
import type { ReplayStatus, UiSnapshot } from "../../shared/ui-protocol/index.js";
import { spawnAgent, type ChildAgent } from "../e2e/browser.js";
import { recordingLines } from "../fixtures/recording.js";
import { agent, cleanupAll, dashboard, info, onCleanup, request, sample, sleep, startHub, summaryOf, T0, waitUntil, type AckAnswer } from "./hub/helpers.js";

afterEach(cleanupAll);

const FIXTURE = join(import.meta.dirname, "../e2e/ui/fixtures/ui-agent.ts");
const tmpFile = (name: string) => join(mkdtempSync(join(tmpdir(), "semscope-replay-")), name);

async function replayHub(file: string, saveDir?: string, opts: Partial<ReplayHubOptions> = {}): Promise<ReplayHub> {
  const hub = await createReplayHub({ file, port: 0, log: () => undefined, ...(saveDir !== undefined ? { saveDir } : {}), ...opts });
  onCleanup(() => hub.close());
  return hub;
}

async function replayControl(url: string): Promise<{ socket: Socket; first: ReplayStatus }> {
  const socket = io(`${url}/replay`, { forceNew: true, reconnection: false, transports: ["websocket"], auth: { protocol: 1 } });
  onCleanup(() => socket.disconnect());
  const first = await new Promise<ReplayStatus>((resolve, reject) => {
    socket.once("replay:status", resolve);
    socket.once("connect_error", reject);
  });
  return { socket, first };
}

/** What the dashboard's views are built from, as the dashboard asks for it. */
async function views(ui: Socket, keys: string[]): Promise<Record<string, unknown>> {
  const snap = (await request<AckAnswer & { snapshot: UiSnapshot }>(ui, "snapshot:get", {})).snapshot;
  const out: Record<string, unknown> = {
    alerts: (await request<AckAnswer>(ui, "alerts:get", {})).alerts,
    semaphores: snap.state.semaphores,
    agents: snap.state.agents,
    active: snap.state.alerts,
    alertLog: snap.alertLog,
    fleet: snap.fleet,
    sparklines: snap.sparklines,
    thresholds: snap.thresholds,
  };
  for (const key of keys) {
    out[`1s ${key}`] = await request<AckAnswer>(ui, "history:get", { key });
    out[`1m ${key}`] = await request<AckAnswer>(ui, "history:get", { key, tier: "1m" });
  }
  for (const f of snap.fleet) out[`fleet ${f.service}/${f.name}`] = await request<AckAnswer>(ui, "fleet:history", { service: f.service, name: f.name });
  return out;
}

describe("replay against the live run", () => {
  it("gives the same alerts and chart data as live agents (child processes) produced", async () => {
    const file = tmpFile("live.ndjson.gz");
    const hub: Hub = await startHub({ record: file });
    const agents: ChildAgent[] = [spawnAgent(FIXTURE, [hub.url, "leak", "inventory", "inv-1"]), spawnAgent(FIXTURE, [hub.url, "convoy", "payments", "pay-1"])];
    onCleanup(() => Promise.all(agents.map((a) => a.kill())));
    await Promise.all(agents.map((a) => a.waitFor("ready")));
    await waitUntil(() => hub.state().alerts.some((a) => a.rule === "leak"), "the leak alert", 20_000);
    // The agent answers the hub's flight_request: the ring lands on the alert (recorded as `flight`).
    await waitUntil(() => hub.state().alerts.some((a) => a.rule === "leak" && a.evidence?.flight !== undefined), "the leak's flight recorder ring", 20_000);
    // A few more seconds of samples and alerts after it.
    const enough = hub.history.get("payments/pay-1/payments")?.latestT() ?? 0;
    await waitUntil(() => (hub.history.get("payments/pay-1/payments")?.latestT() ?? 0) > enough + 3000, "3 s more of samples", 20_000);
    await Promise.all(agents.map((a) => a.kill()));
    await waitUntil(() => hub.state().agents.every((a) => !a.connected), "the agents' disconnects", 10_000);

    const live = await dashboard(hub.url);
    const keys = hub.state().semaphores.map((s) => s.key).sort();
    expect(keys.length).toBeGreaterThanOrEqual(3);
    const liveViews = await views(live.socket, keys);
    const liveAlerts = liveViews.alerts as { rule: string }[];
    expect(liveAlerts.some((a) => a.rule === "leak")).toBe(true);
    expect(liveAlerts.some((a) => a.rule === "agent_down")).toBe(true);
    await hub.close();

    const replay = await replayHub(file);
    const { first } = await replayControl(replay.url);
    expect(first.message).toBeUndefined();
    expect(first.compressed).toBe(true);
    // The cursor opens at the first alert (the end is after shutdown, every agent gone).
    expect(first.cursor).toBe(first.marks[0].at);
    expect(first.marks.map((m) => m.id).sort()).toEqual(liveAlerts.map((a) => (a as unknown as { id: string }).id).sort());
    // At the end, what the live dashboard showed last.
    const { socket: control } = await replayControl(replay.url);
    expect(((await request<AckAnswer & { status: ReplayStatus }>(control, "replay:seek", { t: first.to })) as { ok: boolean }).ok).toBe(true);
    const again = await dashboard(replay.url);
    expect(await views(again.socket, keys)).toEqual(liveViews);
  }, 90_000);

  it("matches the live dashboard at every checkpoint of a scripted run, seeking forward and back", async () => {
    const file = tmpFile("scripted.ndjson.gz");
    let clock = T0 + 250;
    const hub = await startHub({ record: file, now: () => clock });
    const a = await agent(hub, "a1", [info("db", { cap: 10 }), info("pool", { cap: 4 })]);
    const live = await dashboard(hub.url);
    const keys = ["checkout/web-1/db", "checkout/web-1/pool"];
    const checkpoints: { at: number; views: Record<string, unknown> }[] = [];
    for (let i = 0; i < 40; i++) {
      clock += 1000;
      const convoy = i >= 10 && i < 22;
      const db = convoy
        ? sample("db", { inUse: 10, available: 0, waiters: 4, oldestWaitMs: 450, acquired: 20, released: 20, waitMs: summaryOf(...Array<number>(20).fill(400)), holdMs: summaryOf(...Array<number>(20).fill(50)) })
        : sample("db", { inUse: 1 + (i % 6), available: 9 - (i % 6) });
      const ack = await request<AckAnswer>(a, "samples", { seq: i, t: T0 + i * 1000, intervalMs: 1000, items: [db, sample("pool", { cap: 4, inUse: i % 4, available: 4 - (i % 4) })] });
      expect(ack.ok).toBe(true);
      if (i === 15) expect((await request<AckAnswer>(live.socket, "thresholds:set", { patch: { convoy: { clearMs: 3000 } } })).ok).toBe(true);
      if (i % 6 === 5) checkpoints.push({ at: clock, views: await views(live.socket, keys) });
    }
    const convoys = (checkpoints.at(-1)!.views.alerts as { rule: string; resolvedAt: number | null }[]).filter((x) => x.rule === "convoy");
    expect(convoys.length).toBeGreaterThan(0);
    expect(convoys.every((x) => x.resolvedAt !== null)).toBe(true);
    await hub.close();

    const replay = await replayHub(file);
    const control = await replayControl(replay.url);
    const ui = await dashboard(replay.url);
    const seek = async (t: number) => {
      const ack = await request<AckAnswer & { status: ReplayStatus }>(control.socket, "replay:seek", { t });
      expect(ack.ok).toBe(true);
      expect(ack.status.cursor).toBe(t);
    };
    // Forward, checkpoint by checkpoint, then back to each one (a fresh engine fed up to it).
    for (const c of checkpoints) {
      await seek(c.at);
      expect(await views(ui.socket, keys), `at +${c.at - T0} ms`).toEqual(c.views);
    }
    for (const c of [...checkpoints].reverse()) {
      await seek(c.at);
      expect(await views(ui.socket, keys), `back at +${c.at - T0} ms`).toEqual(c.views);
    }
    // The dashboard was told of each jump with a fresh snapshot at the cursor.
    const snap = await new Promise<UiSnapshot>((resolve) => {
      ui.socket.once("snapshot", resolve);
      void seek(checkpoints[0].at);
    });
    expect(snap.serverTime).toBe(checkpoints[0].at);
    // Saving a range is off unless the hub was given a folder.
    expect(await request<AckAnswer>(control.socket, "replay:save", { name: "x", from: T0, to: T0 + 5000 })).toEqual({ ok: false, error: "this replay cannot save ranges" });
    // A replay is read-only.
    const refused = await request<AckAnswer>(ui.socket, "thresholds:set", { patch: { convoy: { clearMs: 1000 } } });
    expect(refused).toEqual({ ok: false, error: expect.stringMatching(/read-only/) });
  }, 60_000);

  it("gives a dashboard connecting a while after a seek the fleet the seek showed", async () => {
    const file = tmpFile("fleet.ndjson.gz");
    let clock = T0 + 250;
    const hub = await startHub({ record: file, now: () => clock });
    const a = await agent(hub, "a1", [info("db", { cap: 10 })]);
    for (let i = 0; i < 10; i++) {
      clock += 1000;
      expect((await request<AckAnswer>(a, "samples", { seq: i, t: T0 + i * 1000, intervalMs: 1000, items: [sample("db", { inUse: i })] })).ok).toBe(true);
    }
    await hub.close();

    const replay = await replayHub(file);
    const control = await replayControl(replay.url);
    // Playing, samples reach this dashboard as deltas, fleet included.
    const ui = await dashboard(replay.url);
    expect((await request<AckAnswer>(control.socket, "replay:play", { speed: 10 })).ok).toBe(true);
    await waitUntil(() => ui.deltas.some((d) => d.fleet !== undefined), "a delta with the fleet");
    expect((await request<AckAnswer>(control.socket, "replay:pause", {})).ok).toBe(true);
    const seeked = new Promise<UiSnapshot>((resolve) => ui.socket.once("snapshot", resolve));
    expect((await request<AckAnswer>(control.socket, "replay:seek", { t: T0 + 250 + 4000 })).ok).toBe(true);
    const fleet = (await seeked).fleet;
    expect(fleet.map((f) => [f.key, f.inUse])).toEqual([["checkout/db", 3]]);
    // Past the time a built snapshot is served again: the next one is built afresh.
    await sleep(1200);
    expect((await dashboard(replay.url)).snapshot.fleet).toEqual(fleet);
  }, 30_000);

  it("saves a named range that opens at its start and matches the original at its end", async () => {
    const file = tmpFile("source.ndjson.gz");
    let clock = T0 + 250;
    const hub = await startHub({ record: file, now: () => clock });
    const a = await agent(hub, "a1", [info("db", { cap: 10 })]);
    for (let i = 0; i < 30; i++) {
      clock += 1000;
      const db = i >= 8 && i < 20
        ? sample("db", { inUse: 10, available: 0, waiters: 4, oldestWaitMs: 450, acquired: 20, released: 20, waitMs: summaryOf(...Array<number>(20).fill(400)), holdMs: summaryOf(...Array<number>(20).fill(50)) })
        : sample("db");
      await request<AckAnswer>(a, "samples", { seq: i, t: T0 + i * 1000, intervalMs: 1000, items: [db] });
    }
    await hub.close();
    const saveDir = join(mkdtempSync(join(tmpdir(), "semscope-saved-")), "saved");
    const replay = await replayHub(file, saveDir);
    const control = await replayControl(replay.url);
    expect(control.first.saveTo).toBe(saveDir);
    const from = T0 + 10_000;
    const to = T0 + 22_000;
    const saved = await request<AckAnswer & { file: string }>(control.socket, "replay:save", { name: "the convoy", from, to });
    expect(saved).toEqual({ ok: true, file: join(saveDir, "the-convoy.ndjson.gz") });
    expect(await request<AckAnswer>(control.socket, "replay:save", { name: "the convoy", from, to })).toEqual({
      ok: false,
      error: `a recording named "the-convoy" already exists in ${saveDir}: choose another name`,
    });
    expect(await request<AckAnswer>(control.socket, "replay:save", { name: "bad", from: to, to: from })).toEqual({ ok: false, error: expect.stringMatching(/from <= to/) });

    const part = await replayHub(saved.file);
    const { first } = await replayControl(part.url);
    expect(first).toMatchObject({ range: { name: "the-convoy", from, to }, cursor: from, compressed: true });
    // At the range's end, the saved file shows what the original showed there.
    const original = await dashboard(replay.url);
    const copy = await dashboard(part.url);
    await request(control.socket, "replay:seek", { t: to });
    const partControl = await replayControl(part.url);
    await request(partControl.socket, "replay:seek", { t: to });
    const keys = ["checkout/web-1/db"];
    expect(await views(copy.socket, keys)).toEqual(await views(original.socket, keys));
  }, 60_000);

  it("shows after a seek from a restore point what a replay fed from the first line shows", async () => {
    const file = tmpFile("long.ndjson.gz");
    let clock = T0 + 250;
    const hub = await startHub({ record: file, now: () => clock });
    const a = await agent(hub, "a1", [info("db", { cap: 10 })]);
    const b = await agent(hub, "b1", [info("pool", { cap: 4 })], { service: "billing", instance: "bill-1" });
    const live = await dashboard(hub.url);
    for (let i = 0; i < 150; i++) {
      clock += 1000;
      // Two convoys on db, the first acknowledged; billing leaves at 100 s (agent_down).
      const convoy = (i >= 20 && i < 35) || (i >= 80 && i < 95);
      const db = convoy
        ? sample("db", { inUse: 10, available: 0, waiters: 4, oldestWaitMs: 450, acquired: 20, released: 20, waitMs: summaryOf(...Array<number>(20).fill(400)), holdMs: summaryOf(...Array<number>(20).fill(50)) })
        : sample("db", { inUse: i % 7 });
      expect((await request<AckAnswer>(a, "samples", { seq: i, t: clock, intervalMs: 1000, items: [db] })).ok).toBe(true);
      if (i < 100) expect((await request<AckAnswer>(b, "samples", { seq: i, t: clock, intervalMs: 1000, items: [sample("pool", { cap: 4, inUse: i % 5 })] })).ok).toBe(true);
      if (i === 100) b.disconnect();
      if (i === 30) {
        const id = hub.state().alerts.find((x) => x.rule === "convoy")?.id;
        expect((await request<AckAnswer>(live.socket, "alert:ack", { id })).ok).toBe(true);
      }
    }
    await hub.close();

    // Restore points every block of ~2 KiB, against a replay with none (each seek back feeds from the start).
    const points = await replayHub(file, undefined, { blockBytes: 2048, checkpointMinBlocks: 1, maxCheckpoints: 12 });
    const plain = await replayHub(file, undefined, { maxCheckpoints: 0 });
    expect(points.session.held.checkpoints).toBeGreaterThan(5);
    expect(points.session.held.checkpoints).toBeLessThanOrEqual(12);
    expect(plain.session.held.checkpoints).toBe(0);
    const controls = [await replayControl(points.url), await replayControl(plain.url)];
    const uis = [await dashboard(points.url), await dashboard(plain.url)];
    const keys = ["checkout/web-1/db", "billing/bill-1/pool"];
    for (const at of [140, 60, 100.5, 10, 130, 31, 85, 0, 150]) {
      const t = T0 + 250 + at * 1000;
      for (const c of controls) expect((await request<AckAnswer>(c.socket, "replay:seek", { t })).ok).toBe(true);
      const [restored, fed] = [await views(uis[0].socket, keys), await views(uis[1].socket, keys)];
      expect(restored, `at +${at} s`).toEqual(fed);
    }
    const alerts = (await views(uis[1].socket, keys)).alerts as { rule: string; acknowledged: boolean; raisedAt: number }[];
    const convoys = alerts.filter((x) => x.rule === "convoy").sort((x, y) => x.raisedAt - y.raisedAt);
    expect(convoys.map((x) => x.acknowledged)).toEqual([true, false]);
    expect(alerts.some((x) => x.rule === "agent_down")).toBe(true);
  }, 90_000);

  it("answers during a long seek at the cursor it had, lands a superseded seek on the later target, and plays from where a seek lands", async () => {
    const file = tmpFile("slices.ndjson");
    writeFileSync(file, `${recordingLines(12_000).join("\n")}\n`);
    // Nothing kept to shorten a seek, slices of 1 ms: a seek across the file runs in hundreds of slices.
    const replay = await replayHub(file, undefined, { maxCheckpoints: 0, pinnedStartBytes: 0, parsedCacheBytes: 0, seekSliceMs: 1 });
    const { socket: control, first } = await replayControl(replay.url);
    const ui = await dashboard(replay.url);
    const keys = ["checkout/web-1/db", "checkout/web-1/pool"];
    const before = await views(ui.socket, keys);
    const snapshots: UiSnapshot[] = [];
    ui.socket.on("snapshot", (snap: UiSnapshot) => snapshots.push(snap));
    const deltas = ui.deltas.length;
    type SeekAnswer = AckAnswer & { status: ReplayStatus };

    // To the end, from where it opened (the first alert): every line fed again.
    const far = request<SeekAnswer>(control, "replay:seek", { t: first.to });
    await waitUntil(() => replay.session.seeking === first.to, "the seek under way", 10_000);
    // Meanwhile the hub answers a page and the dashboard's requests, at the cursor as it was.
    expect((await fetch(`${replay.url}/api/none`)).status).toBe(404);
    expect(await views(ui.socket, keys)).toEqual(before);
    expect(replay.session.seeking).toBe(first.to);
    // A second seek supersedes it: both answers say the cursor landed on the second target.
    const mid = first.from + Math.round((first.to - first.from) / 2);
    const second = await request<SeekAnswer>(control, "replay:seek", { t: mid });
    expect(second).toMatchObject({ ok: true, status: { cursor: mid } });
    expect(await far).toMatchObject({ ok: true, status: { cursor: mid } });
    // The dashboard was sent one snapshot, at the target, and no delta of a time between.
    await waitUntil(() => snapshots.length > 0, "the snapshot at the target");
    expect(snapshots.map((snap) => snap.serverTime)).toEqual([mid]);
    expect(ui.deltas.slice(deltas).filter((d) => d.serverTime !== first.cursor && d.serverTime !== mid)).toEqual([]);
    // What a replay seeking there at once shows.
    const straight = await replayHub(file);
    const straightUi = await dashboard(straight.url);
    expect((await request<AckAnswer>((await replayControl(straight.url)).socket, "replay:seek", { t: mid })).ok).toBe(true);
    expect(await views(ui.socket, keys)).toEqual(await views(straightUi.socket, keys));

    // Play asked for during a seek: the cursor waits for the seek, then plays on from its target.
    const near = first.to - 60_000;
    const landing = request<SeekAnswer>(control, "replay:seek", { t: near });
    const played = await request<SeekAnswer>(control, "replay:play", { speed: 60 });
    expect(played).toMatchObject({ ok: true, status: { playing: true, cursor: mid } });
    expect(await landing).toMatchObject({ ok: true, status: { playing: true, cursor: near } });
    await waitUntil(() => replay.session.cursor > near, "the cursor playing on from the target");
    expect((await request<AckAnswer>(control, "replay:pause", {})).ok).toBe(true);
  }, 90_000);
});
