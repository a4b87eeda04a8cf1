// The diagnosis through a real hub: a recorded "N too tight" stream (simulate.ts) sent by a raw
// socket.io agent; the convoy alert in /api/alerts carries the diagnosis, and the hub's own
// recording replays to the same alert with the same diagnosis.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { replayRecording } from "../../../../main/hub/recording/replay.js";
import type { Diagnosis } from "../../../../shared/diagnosis/index.js";
import type { Alert } from "../../../../shared/protocol/index.js";
import { drawParams, simulate } from "../../../shared/diagnosis/simulate.js";
import { agent, cleanupAll, getJson, info, onCleanup, request, startHub, type AckAnswer } from "../helpers.js";

afterEach(cleanupAll);

it("a convoy from a too-tight N is diagnosed by the hub, with the N Little's law asks for, and replays the same", async () => {
  const dir = mkdtempSync(join(tmpdir(), "semscope-diag-"));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "rec.ndjson");
  const hub = await startHub({ record: file });
  const params = drawParams("tight", 3);
  const sim = simulate(params, 3);
  const s = await agent(hub, "sim-agent", [info("db", { cap: params.permits })], { service: "shop", instance: "web-1" });
  for (const [seq, { t, sample }] of sim.samples.entries()) {
    const ack = await request<AckAnswer>(s, "samples", { seq, t, intervalMs: 1000, items: [sample] });
    expect(ack.ok).toBe(true);
  }
  const alerts = (await getJson<{ alerts: Alert[] }>(hub, "/api/alerts")).body.alerts;
  const convoy = alerts.find((a) => a.rule === "convoy") as Alert;
  expect(convoy).toBeDefined();
  const d = convoy.evidence?.diagnosis as Diagnosis;
  expect(d.cause).toBe("cap_too_tight");
  expect(d.numbers.neededN).toBeGreaterThan(params.permits);
  await hub.close();
  const replay = await replayRecording(file);
  const again = replay.alerts.find((a) => a.id === convoy.id);
  expect(again?.evidence?.diagnosis).toEqual(d);
}, 60_000);
