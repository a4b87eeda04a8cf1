// --record and replay: a recording fed to a fresh engine raises the same alerts, ids and times
// included, as the live hub did; a recording cut short replays up to the damage and says where.
import { spawnSync } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Alert } from "../../../../shared/protocol/index.js";
import { replayRecording } from "../../../../main/hub/index.js";
import { replayLines } from "../../../../main/hub/recording/replay.js";
import { agent, cleanupAll, getJson, info, request, sample, startHub, summaryOf, T0, waitUntil, type AckAnswer } from "../helpers.js";

afterEach(cleanupAll);

const byId = (alerts: Alert[]) => [...alerts].sort((x, y) => (x.id < y.id ? -1 : 1));
const tmpFile = (name: string) => join(mkdtempSync(join(tmpdir(), "semscope-rec-")), name);

/** A live hub through a convoy, a leak, a double release, agents down (silent and gone), an ack and a thresholds change. */
async function liveRun(file: string): Promise<Alert[]> {
  let clock = T0 + 250;
  const hub = await startHub({ record: file, now: () => clock });
  const a = await agent(hub, "a1", [info("db", { cap: 10 }), info("pool", { cap: 4 })]);
  const convoy = { inUse: 10, available: 0, waiters: 4, oldestWaitMs: 450, acquired: 20, released: 20, waitMs: summaryOf(...Array<number>(20).fill(400)), holdMs: summaryOf(...Array<number>(20).fill(50)) };
  for (let i = 0; i < 8; i++) {
    clock += 1000;
    const ack = await request<AckAnswer>(a, "samples", { seq: i, t: T0 + i * 1000, intervalMs: 1000, items: [sample("db", convoy), sample("pool", { cap: 4, inUse: 1 })] });
    expect(ack.ok).toBe(true);
  }
  clock += 1000;
  await request(a, "samples", { seq: 8, t: T0 + 8000, intervalMs: 1000, items: [sample("pool", { cap: 4, inUse: 3, available: 3 })] });
  await request(a, "samples", { seq: 8, t: T0 + 8000, intervalMs: 1000, items: [sample("pool")] }); // duplicate: touch
  await request(a, "samples", { nonsense: 1 }); // refused: touch
  await request(a, "events", { items: [{ t: T0 + 8500, id: "db", type: "double_release", stack: "at release" }] });

  const gone = await agent(hub, "b1", [], { instance: "web-2" });
  gone.disconnect();
  await waitUntil(() => hub.state().alerts.some((x) => x.rule === "agent_down" && x.key === "checkout/web-2"), "agent_down on disconnect");

  // Silence on the hub clock: the 1 s ticker notices.
  clock += 10_000;
  await waitUntil(() => hub.state().alerts.some((x) => x.rule === "agent_down" && x.key === "checkout/web-1"), "agent_down for silence", 5000);
  clock += 100;
  await request(a, "events", { items: [] }); // back

  const leak = hub.state().alerts.find((x) => x.rule === "leak")!;
  expect((await getJson(hub, `/api/alerts/${encodeURIComponent(leak.id)}/ack`, { method: "POST" })).status).toBe(200);
  expect((await getJson(hub, "/api/thresholds", { method: "PUT", body: JSON.stringify({ convoy: { clearMs: 2000 } }) })).status).toBe(200);
  clock += 1000;
  await request(a, "samples", { seq: 9, t: T0 + 20_000, intervalMs: 1000, items: [sample("db"), sample("pool", { cap: 4, inUse: 1 })] });
  clock += 1000;
  await request(a, "samples", { seq: 10, t: T0 + 21_000, intervalMs: 1000, items: [sample("db"), sample("pool", { cap: 4, inUse: 1 })] });
  clock += 1000;
  await request(a, "samples", { seq: 11, t: T0 + 22_000, intervalMs: 1000, items: [sample("db"), sample("pool", { cap: 4, inUse: 1 })] });
  clock += 500;
  await hub.close();
  return hub.engine.allAlerts();
}

describe("recording and replay", () => {
  it("replays to the same alerts as the live engine", async () => {
    const file = tmpFile("run.ndjson");
    const live = await liveRun(file);
    const rules = new Set(live.map((a) => a.rule));
    for (const r of ["convoy", "leak", "double_release", "agent_down"]) expect(rules, r).toContain(r);
    expect(live.some((a) => a.rule === "convoy" && a.resolvedAt !== null)).toBe(true);
    expect(live.some((a) => a.acknowledged)).toBe(true);

    const lines = readFileSync(file, "utf8").trimEnd().split("\n");
    const kinds = new Set(lines.map((l) => (JSON.parse(l) as { k: string }).k));
    for (const k of ["start", "hello", "register", "samples", "events", "touch", "disconnect", "tick", "ack", "thresholds"]) expect(kinds, k).toContain(k);
    expect(JSON.parse(lines[0])).toMatchObject({ k: "start", r: T0 + 250, p: { format: 1, protocol: 1 } });

    const replay = await replayRecording(file);
    expect(replay.stoppedAt).toBeUndefined();
    expect(replay.lines).toBe(lines.length);
    expect(replay.sessions).toBe(1);
    expect(byId(replay.alerts)).toEqual(byId(live));
  });

  it("replays a truncated recording up to the damage and says where it stopped", async () => {
    const file = tmpFile("cut.ndjson");
    await liveRun(file);
    const lines = readFileSync(file, "utf8").trimEnd().split("\n");
    const whole = replayLines(lines.slice(0, -1));
    // A crash mid-write: half of the last line, no newline.
    const cut = tmpFile("cut2.ndjson");
    writeFileSync(cut, `${lines.slice(0, -1).join("\n")}\n${lines.at(-1)!.slice(0, 20)}`);
    const r = await replayRecording(cut);
    expect(r.stoppedAt).toEqual({ line: lines.length, reason: "not valid JSON (a line cut short by a crash?)" });
    expect(r.lines).toBe(lines.length - 1);
    expect(byId(r.alerts)).toEqual(byId(whole.alerts));

    // Damage in the middle stops there too.
    const mid = tmpFile("mid.ndjson");
    writeFileSync(mid, [...lines.slice(0, 5), '{"r":1,"k":"samples","a":"a1","p":{"seq":"x"}}', ...lines.slice(5)].join("\n"));
    const m = await replayRecording(mid);
    expect(m.stoppedAt?.line).toBe(6);
    expect(m.stoppedAt?.reason).toMatch(/^samples: /);
  });

  it("keeps appending across hub runs, each replayed as its own session", async () => {
    const file = tmpFile("twice.ndjson");
    const first = await liveRun(file);
    const second = await liveRun(file);
    const r = await replayRecording(file);
    expect(r.sessions).toBe(2);
    expect(r.alerts.length).toBe(first.length + second.length);
  });

  it("`npm run replay` prints one line per alert and a summary, and reports damage", async () => {
    const file = tmpFile("cli.ndjson");
    const live = await liveRun(file);
    appendFileSync(file, '{"r":17000000');
    const run = spawnSync(process.execPath, ["--import", "tsx", "main/hub/replay-cli.ts", file], { encoding: "utf8", cwd: process.cwd() });
    expect(run.status).toBe(0);
    const out = run.stdout.trimEnd().split("\n");
    const alertLines = out.filter((l) => /^\d{4}-\d\d-\d\dT/.test(l));
    expect(alertLines.length).toBe(live.length);
    expect(alertLines.some((l) => l.includes(" leak ") && l.includes("checkout/web-1/pool"))).toBe(true);
    expect(out).toContainEqual(expect.stringMatching(new RegExp(`^replayed \\d+ lines \\(1 hub session\\): ${live.length} alerts`)));
    expect(run.stderr).toMatch(/stopped at line \d+: not valid JSON/);
    const missing = spawnSync(process.execPath, ["--import", "tsx", "main/hub/replay-cli.ts", "/nonexistent/file"], { encoding: "utf8" });
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/^semscope replay: cannot read/);
    const noArgs = spawnSync(process.execPath, ["--import", "tsx", "main/hub/replay-cli.ts"], { encoding: "utf8" });
    expect(noArgs.status).toBe(2);
  });
});
