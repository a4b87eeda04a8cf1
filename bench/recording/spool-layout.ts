// What a line costs the replay's spool (replay-spool.ts) in its layout (spool-codec.ts: samples as
// numbers) against the JSON it held before, on the lines of a synthetic recording, alternated in
// one process for a few rounds: µs a line to lay out (JSON.stringify against the numbers), to read
// back (inflate and JSON.parse against inflate and build from numbers), and to feed a core (what a
// seek does with each line), and the bytes held before and after compression.
import { performance } from "node:perf_hooks";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { readRecording } from "../../main/hub/recording/recording-reader.js";
import type { AnyRecordLine } from "../../main/hub/recording/recording-line.js";
import { ReplayFeed } from "../../main/hub/recording/replay-feed.js";
import { DEFAULT_BLOCK_BYTES } from "../../main/hub/recording/replay-spool.js";
import { BlockEncoder, decodeBlock, SpoolStrings } from "../../main/hub/recording/spool-codec.js";

export interface LayoutRound {
  stringifyUs: number;
  encodeUs: number;
  parseUs: number;
  decodeUs: number;
  feedUs: number;
  jsonBytes: number;
  jsonDeflated: number;
  numberBytes: number;
  numberDeflated: number;
}

function asJson(lines: readonly AnyRecordLine[]): string[] {
  const blocks: string[] = [];
  let block: string[] = [];
  let bytes = 0;
  for (const l of lines) {
    const text = JSON.stringify(l);
    block.push(text);
    bytes += text.length + 1;
    if (bytes >= DEFAULT_BLOCK_BYTES) {
      blocks.push(block.join("\n"));
      [block, bytes] = [[], 0];
    }
  }
  if (block.length > 0) blocks.push(block.join("\n"));
  return blocks;
}

function asNumbers(lines: readonly AnyRecordLine[], strings: SpoolStrings): Uint8Array[] {
  const enc = new BlockEncoder(strings);
  const blocks: Uint8Array[] = [];
  for (const l of lines) {
    enc.add(l);
    if (enc.bytes >= DEFAULT_BLOCK_BYTES) blocks.push(enc.seal());
  }
  if (enc.bytes > 0) blocks.push(enc.seal());
  return blocks;
}

export async function layoutRounds(file: string, rounds: number): Promise<LayoutRound[]> {
  const lines: AnyRecordLine[] = [];
  await readRecording(file, (l) => void lines.push(l));
  const us = (t0: number) => ((performance.now() - t0) * 1000) / lines.length;
  const size = (xs: readonly { length: number }[]) => xs.reduce((a, b) => a + b.length, 0);
  const out: LayoutRound[] = [];
  for (let r = 0; r < rounds; r++) {
    let t0 = performance.now();
    const json = asJson(lines);
    const stringifyUs = us(t0);
    const strings = new SpoolStrings();
    t0 = performance.now();
    const numbers = asNumbers(lines, strings);
    const encodeUs = us(t0);
    const jz = json.map((b) => deflateRawSync(b, { level: 1 }));
    const nz = numbers.map((b) => deflateRawSync(b, { level: 1 }));
    t0 = performance.now();
    let parsed = 0;
    for (const z of jz) parsed += inflateRawSync(z).toString("utf8").split("\n").map((l) => JSON.parse(l) as unknown).length;
    const parseUs = us(t0);
    t0 = performance.now();
    let decoded = 0;
    for (const z of nz) decoded += decodeBlock(inflateRawSync(z), strings).length;
    const decodeUs = us(t0);
    if (parsed !== lines.length || decoded !== lines.length) throw new Error(`read back ${parsed} and ${decoded} of ${lines.length} lines`);
    const feed = new ReplayFeed({});
    feed.reset(lines[0].r);
    t0 = performance.now();
    for (const l of lines) feed.take(l);
    const feedUs = us(t0);
    out.push({ stringifyUs, encodeUs, parseUs, decodeUs, feedUs, jsonBytes: size(json), jsonDeflated: size(jz), numberBytes: size(numbers), numberDeflated: size(nz) });
  }
  return out;
}
