// A replay's seeks land on exactly the state a replay fed from the first line reaches, whatever
// came before: restore points (dense at the start), the buffers of cores it is done with written
// over by the next restore or copy, seeks in slices superseded by newer ones.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import type { HubCore } from "../../../../main/hub/core/hub-core.js";
import { parseRecordLine, type AnyRecordLine } from "../../../../main/hub/recording/recording-line.js";
import { ReplayCheckpoints } from "../../../../main/hub/recording/replay-checkpoints.js";
import { ReplayFeed } from "../../../../main/hub/recording/replay-feed.js";
import { ReplaySession, type ReplaySessionOptions } from "../../../../main/hub/recording/replay-session.js";
import { recordingLines, recordingSecond } from "../../../fixtures/recording.js";
import { T0 } from "../../../fixtures/protocol.js";

const SECONDS = 240;

const opened: ReplaySession[] = [];
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
});

/** The recording: a convoy early on, and a second hub run (a new `start`) halfway. */
function recording(): { file: string; lines: AnyRecordLine[] } {
  const text = [...recordingLines(SECONDS / 2), ...recordingLines(SECONDS / 2, T0 + (SECONDS / 2) * 1000 + 500).slice(0, 3), ...Array.from({ length: SECONDS / 2 }, (_, i) => recordingSecond(i + 1, T0 + (SECONDS / 2) * 1000 + 500)).flat()];
  const file = join(mkdtempSync(join(tmpdir(), "semscope-seek-")), "run.ndjson");
  writeFileSync(file, `${text.join("\n")}\n`);
  const lines = text.map((l) => {
    const p = parseRecordLine(l);
    if (!p.ok) throw new Error(p.reason);
    return p.line;
  });
  return { file, lines };
}

/** What the dashboards read of a core at a cursor: the hub state, every alert, every chart's points. */
function view(cursor: number, core: HubCore): unknown {
  const charts = core.history.keys().map((k) => {
    const h = core.history.get(k);
    return [k, h?.window("1s", -Infinity, Infinity), h?.window("1m", -Infinity, Infinity)];
  });
  return { cursor, state: core.state(), alerts: core.engine.allAlerts(), charts };
}

/** Where a replay fed every line from the first up to `t` is. */
function fromFirstLine(lines: AnyRecordLine[], t: number): unknown {
  const feed = new ReplayFeed({});
  feed.reset(lines[0].r);
  for (const line of lines) if (line.r <= t) feed.take(line);
  feed.clock = Math.max(feed.clock, t);
  feed.core.changes.take();
  return view(feed.clock, feed.core);
}

async function open(file: string, opts: ReplaySessionOptions): Promise<ReplaySession> {
  const s = await ReplaySession.open(file, opts);
  opened.push(s);
  return s;
}

/** Small blocks and a point at every one of them: every seek restores, copies or feeds across blocks. */
const DENSE: ReplaySessionOptions = { blockBytes: 1024, checkpointMinBlocks: 1, pinnedStartBytes: 0, parsedCacheBytes: 4096 };

describe("replay seeks", () => {
  const rec = recording();
  const from = rec.lines[0].r;
  const to = rec.lines.at(-1)?.r ?? from;
  const clamp = (t: number) => Math.min(to, Math.max(from, t));
  const target = fc.integer({ min: -5_000, max: SECONDS * 1000 + 5_000 }).map((ms) => T0 + ms);

  it("lands each seek, at once or in slices, where feeding from the first line does", async () => {
    const s = await open(rec.file, { ...DENSE, seekSliceMs: 0 });
    expect(s.held.checkpoints).toBeGreaterThan(8);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(target, fc.boolean()), { minLength: 1, maxLength: 6 }), async (seeks) => {
        for (const [t, sliced] of seeks) {
          if (sliced) await s.seekInSlices(t);
          else s.seek(t);
          expect(view(s.cursor, s.current)).toEqual(fromFirstLine(rec.lines, clamp(t)));
        }
      }),
      { numRuns: 30 },
    );
  });

  it("lands where the newest of seeks in slices started one after another goes, each caller answered", async () => {
    const s = await open(rec.file, { ...DENSE, seekSliceMs: 0 });
    await fc.assert(
      fc.asyncProperty(fc.array(target, { minLength: 2, maxLength: 4 }), fc.boolean(), async (targets, lastAtOnce) => {
        const landed = targets.slice(0, -1).map((t) => s.seekInSlices(t));
        const last = targets.at(-1) as number;
        if (lastAtOnce) s.seek(last);
        else landed.push(s.seekInSlices(last));
        await Promise.all(landed);
        expect(s.seeking).toBeNull();
        expect(view(s.cursor, s.current)).toEqual(fromFirstLine(rec.lines, clamp(last)));
      }),
      { numRuns: 20 },
    );
  });

  it("keeps restore points closer together near the start, each at most half its distance from the start past the one before", () => {
    for (const maxCheckpointBytes of [Infinity, 40 * 64 * 1024]) {
      const points = new ReplayCheckpoints({ maxCheckpoints: 16, checkpointMinBlocks: 2, maxCheckpointBytes });
      // A core whose buffer changes everywhere between points: each point costs its whole buffer.
      const core = { ring: new Float64Array(8 * 1024) };
      for (let block = 1; block <= 1000; block++) {
        core.ring.fill(block);
        points.offer({ block, position: block * 10, clock: block, connection: 0, skip: 0, maxR: block }, core as unknown as HubCore, block / 1000);
      }
      const blocks = [...new Set(Array.from({ length: 1000 }, (_, i) => points.before(i + 1)?.block).filter((b) => b !== undefined))];
      expect(blocks.length).toBe(points.count);
      expect(points.count).toBeLessThanOrEqual(16);
      expect(points.bytes).toBeLessThanOrEqual(maxCheckpointBytes);
      const gaps = blocks.slice(1).map((b, i) => b - blocks[i]);
      expect(blocks[0]).toBeLessThanOrEqual(2 * 2);
      // Near the start each gap is at most half the block before it (and at least the least spacing); further on the spacing is even.
      expect(gaps[0]).toBeLessThan(Math.max(...gaps) / 4);
      for (let i = 0; i < 3; i++) expect(gaps[i]).toBeLessThanOrEqual(Math.max(2, blocks[i] / 2) + 1);
      // A restore gives back the state saved there.
      const at = points.before(500);
      expect(at).toBeDefined();
      const back = points.restore(at!, { ring: new Float64Array(0) } as unknown as HubCore) as unknown as { ring: Float64Array };
      expect(back.ring[0]).toBe(at!.block);
    }
  });
});
