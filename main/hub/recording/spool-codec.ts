// How a replay's spool (replay-spool.ts) lays out a block of lines before compressing it: a
// `samples` line (nearly every line of a recording) as numbers in the hub's sample layout
// (shared/protocol/sample-numbers.ts), its strings as indices into a table the spool keeps; any
// other line, or a sample with an optional part, as its JSON. Reading a block back then builds
// objects from numbers instead of parsing text, and writing one re-encodes nothing as JSON.
// Float64 holds every JSON number exactly, so a line read back is the line added.
import { HOLD_AT, PAIRS_AT, readSampleNumbers, readSummaryNumbers, WAIT_AT, writeSampleNumbers } from "../../../shared/protocol/sample-numbers.js";
import { hasParts } from "../../../shared/protocol/sample-layout.js";
import { quietSample } from "../../../shared/protocol/sample-activity.js";
import type { Sample, SamplesBatch, Summary } from "../../../shared/protocol/index.js";
import type { AnyRecordLine } from "./recording-line.js";

/** What follows a line's tag in the numbers. */
const JSON_LINE = 0;
const SAMPLES_LINE = 1;
/** A samples line's numbers before its items: tag, r, agent, seq, t, intervalMs, dropped, partial, items. */
const BATCH_HEAD = 9;
const PARTIAL = [undefined, "more", "end"] as const;
/** Distinct strings (agent and semaphore ids) held as indices at most; past it, lines stay JSON. */
const MAX_STRINGS = 1 << 16;

/** The agent and semaphore ids of a spool's sample lines, each held once. */
export class SpoolStrings {
  readonly list: string[] = [];
  private readonly index = new Map<string, number>();

  /** `s`'s index, added if new; -1 when the table is full. */
  of(s: string): number {
    const i = this.index.get(s);
    if (i !== undefined) return i;
    if (this.list.length >= MAX_STRINGS) return -1;
    this.list.push(s);
    this.index.set(s, this.list.length - 1);
    return this.list.length - 1;
  }
}

/** Lines added one at a time, sealed into one block's bytes. */
export class BlockEncoder {
  private v = new Float64Array(1 << 14);
  private n = 0;
  private texts: string[] = [];
  private textBytes = 0;

  constructor(private readonly strings: SpoolStrings) {}

  /** Bytes the block holds so far (its numbers and its JSON). */
  get bytes(): number {
    return 8 * this.n + this.textBytes;
  }

  add(line: AnyRecordLine): void {
    if (line.k === "samples" && this.addSamples(line as AnyRecordLine & { a: string; p: SamplesBatch })) return;
    this.room(1);
    this.v[this.n++] = JSON_LINE;
    const text = JSON.stringify(line);
    this.texts.push(text);
    this.textBytes += Buffer.byteLength(text) + 1;
  }

  /** The block's bytes: the count of numbers, the numbers, then the JSON lines, one a line. */
  seal(): Uint8Array {
    const text = Buffer.from(this.texts.join("\n"), "utf8");
    const out = new Uint8Array(8 + 8 * this.n + text.length);
    new Float64Array(out.buffer, 0, 1)[0] = this.n;
    new Float64Array(out.buffer, 8, this.n).set(this.v.subarray(0, this.n));
    out.set(text, 8 + 8 * this.n);
    this.n = 0;
    this.texts = [];
    this.textBytes = 0;
    return out;
  }

  private addSamples(line: { r: number; a: string; p: SamplesBatch }): boolean {
    const b = line.p;
    let need = BATCH_HEAD;
    for (const s of b.items) {
      if (hasParts(s)) return false;
      need += 1 + PAIRS_AT + 2 * (s.waitMs.hist.length + s.holdMs.hist.length);
    }
    const agent = this.strings.of(line.a);
    if (agent < 0) return false;
    const ids: number[] = [];
    for (const s of b.items) {
      const id = this.strings.of(s.id);
      if (id < 0) return false;
      ids.push(id);
    }
    this.room(need);
    const v = this.v;
    let at = this.n;
    v[at] = SAMPLES_LINE;
    v[at + 1] = line.r;
    v[at + 2] = agent;
    v[at + 3] = b.seq;
    v[at + 4] = b.t;
    v[at + 5] = b.intervalMs;
    v[at + 6] = b.dropped ?? NaN;
    v[at + 7] = b.partial === undefined ? 0 : PARTIAL.indexOf(b.partial);
    v[at + 8] = b.items.length;
    at += BATCH_HEAD;
    b.items.forEach((s, i) => {
      v[at] = ids[i];
      const waitPairs = at + 1 + PAIRS_AT;
      const holdPairs = waitPairs + 2 * s.waitMs.hist.length;
      writeSampleNumbers(v, at + 1, s, waitPairs, holdPairs);
      at = holdPairs + 2 * s.holdMs.hist.length;
    });
    this.n = at;
    return true;
  }

  private room(more: number): void {
    if (this.n + more <= this.v.length) return;
    const grown = new Float64Array(Math.max(2 * this.v.length, this.n + more));
    grown.set(this.v.subarray(0, this.n));
    this.v = grown;
  }
}

/** The lines of a block BlockEncoder sealed, as they were added. */
export function decodeBlock(bytes: Uint8Array, strings: SpoolStrings): AnyRecordLine[] {
  // Float64Array needs its offset aligned to 8; an inflated buffer may sit anywhere in a pool.
  const data = bytes.byteOffset % 8 === 0 ? bytes : bytes.slice();
  const n = new Float64Array(data.buffer, data.byteOffset, 1)[0];
  const v = new Float64Array(data.buffer, data.byteOffset + 8, n);
  const texts = Buffer.from(data.buffer, data.byteOffset + 8 + 8 * n, data.length - 8 - 8 * n).toString("utf8").split("\n");
  const ids = strings.list;
  const lines: AnyRecordLine[] = [];
  let text = 0;
  for (let at = 0; at < n; ) {
    if (v[at] === JSON_LINE) {
      lines.push(JSON.parse(texts[text++]) as AnyRecordLine);
      at++;
      continue;
    }
    const count = v[at + 8];
    const items: Sample[] = new Array<Sample>(count);
    let i = at + BATCH_HEAD;
    for (let k = 0; k < count; k++) {
      // Keys in the wire's order, as a parsed line has them; every number is read in below.
      const s = quietSample(ids[v[i]], ZERO_GAUGES);
      readSampleNumbers(v, i + 1, s);
      const waitPairs = i + 1 + PAIRS_AT;
      const holdPairs = waitPairs + 2 * readPairs(v, i + 1 + WAIT_AT, waitPairs, s.waitMs);
      i = holdPairs + 2 * readPairs(v, i + 1 + HOLD_AT, holdPairs, s.holdMs);
      items[k] = s;
    }
    const p: SamplesBatch = { seq: v[at + 3], t: v[at + 4], intervalMs: v[at + 5], items };
    if (!Number.isNaN(v[at + 6])) p.dropped = v[at + 6];
    const partial = PARTIAL[v[at + 7]];
    if (partial !== undefined) p.partial = partial;
    lines.push({ r: v[at + 1], k: "samples", a: ids[v[at + 2]], p });
    at = i;
  }
  return lines;
}

const ZERO_GAUGES = { cap: 0, inUse: 0, available: 0, longestHoldMs: 0 };

/** A summary's numbers and its pairs (from `pairsAt`) into `into`; the number of pairs. */
function readPairs(v: Float64Array, at: number, pairsAt: number, into: Summary): number {
  const n = readSummaryNumbers(v, at, into);
  const hist: [number, number][] = new Array<[number, number]>(n);
  for (let j = 0; j < n; j++) hist[j] = [v[pairsAt + 2 * j], v[pairsAt + 2 * j + 1]];
  into.hist = hist;
  return n;
}
