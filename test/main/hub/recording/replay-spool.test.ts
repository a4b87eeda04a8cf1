// What a replay holds of its recording (replay-spool.ts): the lines in compressed blocks, read
// back forward exactly; and a replay reading its lines block by block is, after any seek,
// exactly where one seeking straight there is.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { parseRecordLine, type AnyRecordLine } from "../../../../main/hub/recording/recording-line.js";
import { ReplaySession, type ReplaySessionOptions } from "../../../../main/hub/recording/replay-session.js";
import { ReplaySpool, SpoolCursor } from "../../../../main/hub/recording/replay-spool.js";
import { recordingLines } from "../../../fixtures/recording.js";
import { makeSample, makeSummary, T0 } from "../../../fixtures/protocol.js";

const opened: ReplaySession[] = [];
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
});

function parsed(lines: string[]): AnyRecordLine[] {
  return lines.map((l) => {
    const p = parseRecordLine(l);
    if (!p.ok) throw new Error(p.reason);
    return p.line;
  });
}

async function open(file: string, blockBytes?: number, opts: ReplaySessionOptions = {}): Promise<ReplaySession> {
  const s = await ReplaySession.open(file, blockBytes === undefined ? opts : { ...opts, blockBytes });
  opened.push(s);
  return s;
}

/** Where a replay is: the hub state its dashboards read, every alert, and a chart's history. */
function where(s: ReplaySession): unknown {
  const core = s.current;
  return { cursor: s.cursor, state: core.state(), alerts: core.engine.allAlerts(), db: core.history.get("checkout/web-1/db")?.latestT() };
}

describe("replay spool", () => {
  it("gives back every line, in order, across block boundaries, each block knowing its times", () => {
    const lines = parsed(recordingLines(120));
    const spool = new ReplaySpool(2048);
    for (const l of lines) spool.add(l);
    spool.finish();
    expect(spool.blockCount).toBeGreaterThan(20);
    expect(spool.lines).toBe(lines.length);
    const cursor = new SpoolCursor(spool);
    const back: AnyRecordLine[] = [];
    for (let l = cursor.take(); l !== undefined; l = cursor.take()) back.push(l);
    expect(back).toEqual(lines);
    let n = 0;
    for (let i = 0; i < spool.blockCount; i++) {
      const b = spool.block(i)!;
      expect(b.firstR).toBe(lines[n].r);
      expect(b.lastR).toBe(lines[n + b.lines - 1].r);
      n += b.lines;
    }
    expect(n).toBe(lines.length);
    // Peeking does not move the cursor.
    const fresh = new SpoolCursor(spool);
    expect(fresh.peek()).toEqual(lines[0]);
    expect(fresh.take()).toEqual(lines[0]);
    expect(fresh.taken).toBe(1);
  });

  it("gives back samples exactly as parsed, fractions, optional fields and parts included, and every other line as it was", () => {
    const lines = parsed([
      ...recordingLines(2),
      JSON.stringify({ r: T0 + 3000, k: "samples", a: "a1", p: { seq: 3, t: T0 + 3000, intervalMs: 1000, dropped: 2, partial: "more", items: [makeSample({ id: "db", oldestWaitMs: 0.1 + 0.2, longestHoldMs: 1e-7, available: -3, holdMs: makeSummary(12.345678901234567, 2e9) })] } }),
      JSON.stringify({ r: T0 + 3001, k: "samples", a: "a1", p: { seq: 4, t: T0 + 3001, intervalMs: 1000, partial: "end", items: [makeSample({ id: "pool", opening: 2 }), makeSample({ id: "db" })] } }),
      JSON.stringify({ r: T0 + 3002, k: "samples", a: "a2", p: { seq: 1, t: T0 + 3002, intervalMs: 250, items: [] } }),
      JSON.stringify({ r: T0 + 3003, k: "ack", p: { id: "x" } }),
    ]);
    const spool = new ReplaySpool({ blockBytes: 1 << 20, pinnedStartBytes: 0 });
    for (const l of lines) spool.add(l);
    void spool.finish();
    const cursor = new SpoolCursor(spool);
    const back: AnyRecordLine[] = [];
    for (let l = cursor.take(); l !== undefined; l = cursor.take()) back.push(l);
    // Keys in the same order too: a saved range writes the lines it reads back.
    expect(back.map((l) => JSON.stringify(l))).toEqual(lines.map((l) => JSON.stringify(l)));
    expect(spool.reads).toBe(1);
  });

  it("holds a recording in a small part of its text", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "semscope-spool-")), "long.ndjson.gz");
    writeFileSync(file, gzipSync(`${recordingLines(1200).join("\n")}\n`));
    const s = await open(file);
    expect(s.held.lines).toBe(s.summary.lines);
    expect(s.held.bytes).toBeLessThan(s.summary.bytes / 8);
  });

  it("after any seek, forward or back, is where a replay seeking straight there is", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "semscope-spool-")), "run.ndjson");
    writeFileSync(file, `${recordingLines(60).join("\n")}\n`);
    // Blocks of a few lines each: every seek crosses block boundaries.
    const small = await open(file, 1024);
    expect(small.held.blocks).toBeGreaterThan(30);
    expect(small.marks.map((m) => m.rule)).toEqual(["convoy"]);
    expect(small.cursor).toBe(small.marks[0].at);
    for (const t of [T0 + 30_500, T0 + 10_000, T0 + 59_000, T0 + 1_000, T0 + 14_999, T0 + 20_000, T0 + 120_000]) {
      small.seek(t);
      const straight = await open(file);
      straight.seek(t);
      expect(where(small), `at ${t - T0} ms`).toEqual(where(straight));
    }
  });

  it("seeks back through the blocks it read last, or its pinned start, without reading them again, to where a fresh feed is", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "semscope-spool-")), "run.ndjson");
    writeFileSync(file, `${recordingLines(300).join("\n")}\n`);
    // No restore points: a seek back feeds from the first line, through blocks read before.
    const cached = await open(file, 1024, { maxCheckpoints: 0, pinnedStartBytes: 0 });
    const uncached = await open(file, 1024, { maxCheckpoints: 0, pinnedStartBytes: 0, parsedCacheBytes: 0 });
    // The whole file within the pinned start: each block is read once, then kept.
    const pinned = await open(file, 1024, { maxCheckpoints: 0, parsedCacheBytes: 0 });
    const straight = await open(file);
    // Opening read the pinned start (here the whole file), so no seek reads a block again.
    expect(pinned.held.blockReads).toBe(pinned.held.blocks);
    for (const s of [cached, uncached, pinned]) s.seek(T0 + 200_000);
    const reads = [cached.held.blockReads, uncached.held.blockReads, pinned.held.blockReads];
    for (const t of [T0 + 199_000, T0 + 120_500, T0 + 200_000]) {
      straight.seek(t);
      for (const s of [cached, uncached, pinned]) {
        s.seek(t);
        expect(where(s), `at ${t - T0} ms`).toEqual(where(straight));
      }
    }
    expect(cached.held.blockReads).toBe(reads[0]);
    expect(uncached.held.blockReads).toBeGreaterThan(reads[1] + 100);
    expect(pinned.held.blockReads).toBe(reads[2]);
  });

  it("re-feeding the lines it keeps parsed, or restoring a point, ends where parsing every line afresh from the first does", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "semscope-spool-")), "run.ndjson");
    writeFileSync(file, `${recordingLines(300).join("\n")}\n`);
    // The core is fed the very line objects it was fed before: it must not have changed them.
    const keeping = await open(file, 1024, { checkpointMinBlocks: 1 });
    const afresh = await open(file, 1024, { maxCheckpoints: 0, pinnedStartBytes: 0, parsedCacheBytes: 0 });
    for (const t of [T0 + 280_000, T0 + 20_000, T0 + 150_000, T0 + 5_000, T0 + 290_000, T0 + 60_000, T0 + 2_000]) {
      keeping.seek(t);
      afresh.seek(t);
      expect(where(keeping), `at ${t - T0} ms`).toEqual(where(afresh));
    }
    // The whole file is within the pinned start, read while opening: each block once.
    expect(keeping.held.blockReads).toBe(keeping.held.blocks);
    expect(afresh.held.blockReads).toBeGreaterThan(2 * afresh.held.blocks);
  });

  it("keeps its restore points within their count and bytes, and seeks right without any", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "semscope-spool-")), "run.ndjson");
    writeFileSync(file, `${recordingLines(300).join("\n")}\n`);
    const few = await open(file, 1024, { checkpointMinBlocks: 1, maxCheckpoints: 5 });

    expect(few.held.blocks).toBeGreaterThan(100);
    expect(few.held.checkpoints).toBeGreaterThanOrEqual(3);
    expect(few.held.checkpoints).toBeLessThanOrEqual(5);
    const onePoint = few.held.checkpointBytes / few.held.checkpoints;
    const small = await open(file, 1024, { checkpointMinBlocks: 1, maxCheckpointBytes: Math.ceil(onePoint * 2.5) });
    expect(small.held.checkpoints).toBeGreaterThan(0);
    expect(small.held.checkpointBytes).toBeLessThanOrEqual(Math.ceil(onePoint * 2.5));
    // No room for even one: the replay keeps none and feeds every backward seek from the start.
    const none = await open(file, 1024, { checkpointMinBlocks: 1, maxCheckpointBytes: 1 });
    expect(none.held).toMatchObject({ checkpoints: 0, checkpointBytes: 0 });
    const straight = await open(file);
    for (const t of [T0 + 250_000, T0 + 12_000, T0 + 299_000, T0 + 140_500]) {
      straight.seek(t);
      for (const s of [few, small, none]) {
        s.seek(t);
        expect(where(s), `at ${t - T0} ms`).toEqual(where(straight));
      }
    }
  });
});
