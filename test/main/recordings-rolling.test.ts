// The app's rolling recordings: segments rotate at their share of the cap, the oldest are deleted
// to stay within it, each segment replays on its own, a saved range joins segments into one file
// that replays to the same alerts as the whole, and damaged or cut-short files load up to the
// damage with a message saying where.
import { existsSync, mkdtempSync, readFileSync, statSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { applyThresholds, DEFAULT_THRESHOLDS, type ThresholdsPatch } from "../../shared/alerts/index.js";
import type { RecordLine } from "../../main/hub/core/record-line.js";
import { Recorder } from "../../main/hub/recording/recorder.js";
import { listSegments, pruneSegments, RollingRecorder, segmentBytesFor } from "../../main/hub/recording/recording-rolling.js";
import { GzipRecorder } from "../../main/hub/recording/recording-writer.js";
import { ReplaySession } from "../../main/hub/recording/replay-session.js";
import { replayRecording } from "../../main/hub/recording/replay.js";
import { readRecording } from "../../main/hub/recording/recording-reader.js";
import { recordingSettings, saveRange, safeName } from "../../main/app/recordings.js";
import { hello, info, sample, summaryOf, T0 } from "./hub/helpers.js";
import { spawnAgent } from "../e2e/browser.js";

const tmp = () => mkdtempSync(join(tmpdir(), "semscope-roll-"));

/** A hub's worth of lines: one agent, a pool that convoys for a while every 60 s, a tick a second. */
function* scenario(seconds: number): Generator<RecordLine> {
  yield { r: T0, k: "start", p: { format: 1, hubVersion: "test", protocol: 1, thresholds: DEFAULT_THRESHOLDS } };
  yield { r: T0 + 1, k: "hello", a: "a1", p: hello("a1") };
  yield { r: T0 + 2, k: "register", a: "a1", p: { semaphores: [info("db", { cap: 10 }), info("pool", { cap: 4 })] } };
  for (let i = 0; i < seconds; i++) {
    const r = T0 + 1000 + i * 1000;
    const convoy = i % 60 >= 20 && i % 60 < 35;
    const db = convoy
      ? sample("db", { inUse: 10, available: 0, waiters: 4 + (i % 3), oldestWaitMs: 450, acquired: 20, released: 20, waitMs: summaryOf(...Array<number>(20).fill(400 + i)), holdMs: summaryOf(...Array<number>(20).fill(50)) })
      : sample("db", { inUse: 2 + (i % 5), available: 8 - (i % 5), holdMs: summaryOf(10 + (i % 7), 20) });
    yield { r, k: "samples", a: "a1", p: { seq: i, t: r - 30, intervalMs: 1000, items: [db, sample("pool", { cap: 4, inUse: i % 4, available: 4 - (i % 4) })] } };
    yield { r: r + 500, k: "tick" };
  }
}

/** `paced`: let the compressed bytes reach the file now and then, as a running hub's flushes do; else one burst. */
async function writeRolling(dir: string, capBytes: number, segmentBytes: number, seconds: number, paced = true): Promise<RollingRecorder> {
  const rec = new RollingRecorder({ dir, capBytes, segmentBytes, log: () => undefined, flushMs: 10 });
  for (const line of scenario(seconds)) {
    rec.write(line);
    if (paced && line.k === "tick" && line.r % 5_000 === 1500) await new Promise((r) => setTimeout(r, 15));
  }
  rec.close();
  await rec.closed;
  return rec;
}

const ids = (alerts: { id: string }[]) => alerts.map((a) => a.id).sort();

describe("rolling recordings", () => {
  it("settings default to on with a 1 GiB cap, and a cap below the minimum is raised", () => {
    expect(recordingSettings(undefined)).toEqual({ enabled: true, capBytes: 1024 ** 3 });
    expect(recordingSettings({ recording: { enabled: false, capBytes: 1 } })).toEqual({ enabled: false, capBytes: 16 * 1024 * 1024 });
    expect(segmentBytesFor(1024 ** 3)).toBe(8 * 1024 * 1024);
    expect(segmentBytesFor(32 * 1024 * 1024)).toBe(4 * 1024 * 1024);
    expect(segmentBytesFor(100 * 1024)).toBe(64 * 1024);
  });

  it("rotates into segments, each replaying on its own with the agents it continues", async () => {
    const dir = tmp();
    await writeRolling(dir, 100 * 1024 * 1024, 4 * 1024, 600);
    const segs = listSegments(dir);
    expect(segs.length).toBeGreaterThan(2);
    // A later segment alone: its preamble tells the engine the agent and its semaphores.
    const later = await ReplaySession.open(segs[2].file);
    expect(later.message).toBeUndefined();
    const keys = later.current.registry.semaphores().map((s) => s.key).sort();
    expect(keys).toEqual(["checkout/web-1/db", "checkout/web-1/pool"]);
    expect(later.current.history.get("checkout/web-1/db")?.latestT()).not.toBeNull();
    later.close();
  });

  it("restates the thresholds in a new segment as one merged change, however many were made", async () => {
    const dir = tmp();
    const rec = new RollingRecorder({ dir, capBytes: 100 * 1024 * 1024, segmentBytes: 4 * 1024, log: () => undefined, flushMs: 10 });
    let expected = DEFAULT_THRESHOLDS;
    let n = 0;
    for (const line of scenario(300)) {
      rec.write(line);
      if (line.k !== "tick") continue;
      // A person changing one field, then another, again and again.
      const patch: ThresholdsPatch = n % 2 === 0 ? { convoy: { windowMs: 1000 + n } } : { convoy: { minWaiters: 1 + (n % 5) }, timeouts: { ratio: 0.01 * (1 + (n % 9)) } };
      n++;
      expected = applyThresholds(expected, patch);
      rec.write({ r: line.r + 1, k: "thresholds", p: patch });
      if (line.r % 5_000 === 1500) await new Promise((r) => setTimeout(r, 15));
    }
    rec.close();
    await rec.closed;
    const segs = listSegments(dir);
    expect(segs.length).toBeGreaterThan(2);
    const last = segs[segs.length - 1];
    const lines: { k: string }[] = [];
    await readRecording(last.file, (l) => void lines.push(l));
    const start = lines.findIndex((l) => l.k === "start");
    const preamble = lines.slice(start + 1, start + 1 + 3).filter((l) => l.k === "thresholds");
    expect(preamble).toHaveLength(1);
    // The segment alone ends with the thresholds the whole run ended with.
    const alone = await ReplaySession.open(last.file);
    alone.seek(alone.to);
    expect(alone.current.engine.thresholds).toEqual(expected);
    alone.close();
  });

  it("deletes the oldest segments to stay within the cap, never the current one", async () => {
    const dir = tmp();
    const cap = 24 * 1024;
    // Compressed, 1,800 s of lines are about twice the cap however the segments fall.
    const rec = await writeRolling(dir, cap, 4 * 1024, 1800);
    const segs = listSegments(dir);
    const total = segs.reduce((s, f) => s + f.bytes, 0);
    expect(rec.dropped.length).toBeGreaterThan(0);
    expect(total).toBeLessThanOrEqual(cap);
    // What is left is the newest: the first segment (counter 0000) is gone, the last one written is there.
    expect(segs.map((s) => s.name)).not.toContain(rec.dropped[0]);
    expect(segs.at(-1)?.file).toBe(rec.file);
    // pruneSegments on its own: a tighter cap leaves only the kept one when needed.
    const keep = segs.at(-1)!.file;
    pruneSegments(dir, 1, keep);
    expect(listSegments(dir).map((s) => s.file)).toEqual([keep]);
  });

  it("keeps segments to their share and the folder within the cap when lines come faster than they are compressed", async () => {
    // One burst: the compressor (off the thread) hands back nothing until it is over.
    const dir = tmp();
    const cap = 24 * 1024;
    const share = 4 * 1024;
    const rec = await writeRolling(dir, cap, share, 1800, false);
    const segs = listSegments(dir);
    expect(rec.dropped.length).toBeGreaterThan(0);
    expect(segs.reduce((s, f) => s + f.bytes, 0)).toBeLessThanOrEqual(cap);
    expect(segs.at(-1)?.file).toBe(rec.file);
    // A segment ends with the line that took it past its share (a few hundred bytes of text at most).
    for (const seg of segs) expect(seg.bytes, seg.name).toBeLessThanOrEqual(share + 512);
    // The kept segments still replay, the last one alone up to the burst's end.
    const last = await ReplaySession.open(rec.file);
    expect(last.message).toBeUndefined();
    expect(last.to).toBeGreaterThanOrEqual(T0 + 1800 * 1000);
    last.close();
  });

  it("saves a range across segments into one file that replays like the whole recording", async () => {
    const dir = tmp();
    // The first segment rotates at its share of text (no compression ratio is known yet): ~140 s,
    // holding `from` below (a copy starts at the segment holding `from`); the second holds `to`.
    await writeRolling(dir, 100 * 1024 * 1024, 128 * 1024, 300);
    expect(listSegments(dir).length).toBeGreaterThanOrEqual(2);
    const whole = join(tmp(), "whole.ndjson");
    writeFileSync(whole, [...scenario(300)].map((l) => JSON.stringify(l)).join("\n") + "\n");
    const expected = await replayRecording(whole);
    expect(expected.alerts.filter((a) => a.rule === "convoy").length).toBeGreaterThanOrEqual(4);

    const out = tmp();
    const from = T0 + 100_000;
    const to = T0 + 250_000;
    const saved = await saveRange(dir, out, "convoys/at 03:12", from, to);
    expect(saved.file).toBe(join(out, "convoys-at-03-12.ndjson.gz"));
    expect(saved.warnings).toEqual([]);
    const session = await ReplaySession.open(saved.file);
    expect(session.range).toEqual({ name: "convoys-at-03-12", from, to });
    // The cursor opens at the range's start; the timeline ends at its end.
    expect(session.cursor).toBe(from);
    expect(session.to).toBeLessThanOrEqual(to);
    session.seek(to);
    // Every alert raised up to `to` in the whole recording, as it stood at `to`.
    const live = await ReplaySession.open(whole);
    live.seek(to);
    expect(ids(session.current.engine.allAlerts())).toEqual(ids(live.current.engine.allAlerts()));
    expect(session.current.engine.allAlerts()).toEqual(live.current.engine.allAlerts());
    session.close();
    live.close();
    await expect(saveRange(dir, out, "nothing", T0 - 10_000_000, T0 - 5_000_000)).rejects.toThrow(/no recording covers/);
    expect(() => safeName("  ")).toThrow(/needs a name/);
    // Names become file names without spaces, so a shell or a link can use them as they are.
    expect(safeName(" leak  incident, 03:12 ")).toBe("leak-incident-03-12");
  });

  it("keeps recordings readable by their owner only, and never writes through a name already taken or a planted link", async () => {
    const dir = join(tmp(), "rec");
    await writeRolling(dir, 64 * 1024 * 1024, 16 * 1024 * 1024, 30);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const [segment] = listSegments(dir);
    expect(statSync(segment.file).mode & 0o777).toBe(0o600);

    const out = join(tmp(), "saved");
    const saved = await saveRange(dir, out, "first", T0, T0 + 20_000);
    expect(statSync(out).mode & 0o777).toBe(0o700);
    expect(statSync(saved.file).mode & 0o777).toBe(0o600);
    // A second save under the same name is refused, not appended to the first.
    const before = readFileSync(saved.file);
    await expect(saveRange(dir, out, "first", T0, T0 + 20_000)).rejects.toThrow(`a recording named "first" already exists in ${out}: choose another name`);
    expect(readFileSync(saved.file).equals(before)).toBe(true);
    // A dangling link at the name is not followed to create its target.
    const target = join(tmp(), "elsewhere.txt");
    symlinkSync(target, join(out, "planted.ndjson.gz"));
    await expect(saveRange(dir, out, "planted", T0, T0 + 20_000)).rejects.toThrow(`a recording named "planted" already exists in ${out}: choose another name`);
    expect(existsSync(target)).toBe(false);

    const plain = join(tmp(), "plain.ndjson");
    const recorder = new Recorder(plain, () => undefined);
    recorder.close();
    expect(statSync(plain).mode & 0o777).toBe(0o600);
  });
});

describe("damaged recordings", () => {
  it("a gzip recording cut short loads up to the damage and says where", async () => {
    const file = join(tmp(), "cut.ndjson.gz");
    const rec = new GzipRecorder(file, () => undefined, { flushMs: 5 });
    let n = 0;
    for (const line of scenario(200)) {
      rec.write(line);
      if (++n % 50 === 0) {
        rec.flush();
        await new Promise((r) => setTimeout(r, 5));
      }
    }
    rec.close();
    await rec.closed;
    truncateSync(file, Math.floor(statSync(file).size * 0.6));
    const s = await ReplaySession.open(file);
    expect(s.summary.lines).toBeGreaterThan(50);
    expect(s.message).toMatch(/^stopped at line \d+ \(byte \d+ of the recording's text; recorded time reached 2023-11-14T\d\d:\d\d:\d\d\.\d+Z\): the compressed data ends early/);
    expect(s.message).toContain(`line ${s.summary.lines + 1} `);
    // Everything before the damage is there: the replay reaches the last time loaded.
    expect(s.to).toBe(s.summary.stoppedAt?.reachedT);
    expect(s.status().message).toBe(s.message);
    // The headless replay reads the same file the same way.
    const cli = await replayRecording(file);
    expect(cli.stoppedAt?.reason).toMatch(/compressed data/);
    s.close();
  });

  it("a process killed while recording compactly loses at most about the last second", async () => {
    const file = join(tmp(), "killed.ndjson.gz");
    const child = spawnAgent(join(import.meta.dirname, "fixtures/recordings-crash-child.ts"), [file]);
    await child.waitFor("ready");
    const killedAt = Date.now();
    await child.kill("SIGKILL");
    const s = await ReplaySession.open(file);
    expect(s.summary.lines).toBeGreaterThan(50);
    // Flushed every second: what was lost is the last second or so (generous bound for a loaded machine).
    expect(s.to).toBeGreaterThan(killedAt - 2500);
    // The gzip stream never got its end: loading says so, after everything flushed.
    expect(s.message).toMatch(/: the compressed data ends early/);
    s.close();
  }, 30_000);

  it("a plain NDJSON recording (the headless hub's --record) with a broken line stops there", async () => {
    const file = join(tmp(), "plain.ndjson");
    const lines = [...scenario(30)].map((l) => JSON.stringify(l));
    lines[40] = lines[40].slice(0, 25);
    writeFileSync(file, lines.join("\n") + "\n");
    const s = await ReplaySession.open(file);
    expect(s.summary.gzip).toBe(false);
    expect(s.summary.lines).toBe(40);
    const byte = Buffer.byteLength(lines.slice(0, 40).join("\n") + "\n");
    const reached = (JSON.parse(lines[39]) as { r: number }).r;
    expect(s.message).toBe(
      `stopped at line 41 (byte ${byte} of the recording's text; recorded time reached ${new Date(reached).toISOString()}): not valid JSON (a line cut short by a crash?); everything before it was loaded`,
    );
    expect(readFileSync(file, "utf8").length).toBeGreaterThan(byte);
    s.close();
  });

  it("a gzip recording is several times smaller than the same plain lines", () => {
    const text = [...scenario(600)].map((l) => JSON.stringify(l)).join("\n") + "\n";
    expect(gzipSync(text).length * 5).toBeLessThan(Buffer.byteLength(text));
  });
});
