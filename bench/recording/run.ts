// Recordings: (size) the built-in demo fleet (agent/demo, six service processes) streams to a hub
// that records compactly (gzip, recording-writer.ts) for a while; the same lines as plain NDJSON
// (the headless hub's --record) are the gunzipped file; prints bytes per semaphore-hour of both.
// (replay) a synthetic recording (synthetic.ts, default 100 semaphores for an hour) opened as the
// dashboard's replay opens it and as the replay that held every parsed line did (parsed-replay.ts),
// each in a child process (replay-child.ts), alternated for a few rounds: open and seek times, the
// longest event-loop block while opening, peak RSS, and same-round ratios. (layout) what a line of
// that recording costs the spool in its layout against JSON (spool-layout.ts).
// Usage: npm run bench:recording [-- --seconds 120 --parts size,replay,layout --replay-seconds 3600 --replay-semaphores 100 --replay-rounds 4]
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { gunzipSync } from "node:zlib";
import { startDemo } from "../../agent/demo/fleet.js";
import { createHub } from "../../main/hub/index.js";
import { SEEKS } from "./seeks.js";
import { layoutRounds, type LayoutRound } from "./spool-layout.js";
import { writeSyntheticRecording, type SyntheticRecording } from "./synthetic.js";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "120" },
    parts: { type: "string", default: "size,replay,layout" },
    "replay-seconds": { type: "string", default: "3600" },
    "replay-semaphores": { type: "string", default: "100" },
    "replay-rounds": { type: "string", default: "4" },
  },
});
const parts = new Set(values.parts.split(","));
const dir = mkdtempSync(join(tmpdir(), "semscope-bench-rec-"));

async function size(): Promise<void> {
  const seconds = Number(values.seconds);
  const file = join(dir, "demo.ndjson.gz");
  const hub = await createHub({ port: 0, record: file, log: () => undefined });
  const demo = await startDemo({ url: hub.url, log: () => undefined });
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const semaphores = hub.state().semaphores.length;
  const intervals = new Set(hub.state().agents.map((a) => a.agentId)).size;
  await demo.stop();
  await hub.close();

  const gz = statSync(file).size;
  const text = gunzipSync(readFileSync(file));
  const lines = text.toString("utf8").trimEnd().split("\n");
  const first = (JSON.parse(lines[0]) as { r: number }).r;
  const last = (JSON.parse(lines.at(-1) as string) as { r: number }).r;
  const hours = (last - first) / 3_600_000;
  const perSemHour = (bytes: number) => Math.round(bytes / (semaphores * hours));
  console.log(`demo fleet: ${intervals} agents, ${semaphores} semaphores, ${((last - first) / 1000).toFixed(0)} s recorded, ${lines.length} lines`);
  console.log(`plain NDJSON: ${text.length} bytes = ${perSemHour(text.length)} bytes per semaphore-hour`);
  console.log(`gzip (1 s sync flush): ${gz} bytes = ${perSemHour(gz)} bytes per semaphore-hour (${(text.length / gz).toFixed(1)}× smaller)`);
}

interface ChildResult {
  openMs: number;
  openBlockMs: number;
  seeks: number[];
  /** Each seek's CPU time (the process's, its GC threads' included). */
  seeksCpu: number[];
  /** The same seeks in slices, in all, and the longest event-loop block meanwhile (the spool only). */
  slicedMs?: number;
  slicedBlockMs?: number;
  checkpoints: number;
  checkpointMB: number;
  marks: number;
  heapMB: number;
  peakRssMB: number;
}

const KINDS = ["parsed", "spool"] as const;

const range = (xs: number[], digits = 0) => {
  const [lo, hi] = [Math.min(...xs), Math.max(...xs)];
  return lo === hi ? lo.toFixed(digits) : `${lo.toFixed(digits)}–${hi.toFixed(digits)}`;
};

async function synthetic(): Promise<SyntheticRecording> {
  const seconds = Number(values["replay-seconds"]);
  const semaphores = Number(values["replay-semaphores"]);
  const agents = Math.max(1, Math.round(semaphores / 10));
  const rec = await writeSyntheticRecording(join(dir, "synthetic.ndjson.gz"), agents, Math.round(semaphores / agents), seconds);
  console.log(`replay: ${agents * Math.round(semaphores / agents)} semaphores × ${seconds} s: ${rec.lines} lines, ${(rec.textBytes / 1e6).toFixed(0)} MB of text, ${(rec.fileBytes / 1e6).toFixed(1)} MB gzip`);
  return rec;
}

async function layout(rec: SyntheticRecording): Promise<void> {
  const rounds = await layoutRounds(rec.file, Number(values["replay-rounds"]));
  const row = (name: string, json: (r: LayoutRound) => number, numbers: (r: LayoutRound) => number, unit: string, digits = 1) =>
    console.log(`| ${name} | ${range(rounds.map(json), digits)} ${unit} | ${range(rounds.map(numbers), digits)} ${unit} | ${range(rounds.map((r) => numbers(r) / json(r)), 2)} |`);
  console.log(`\nspool layout, ${rounds.length} rounds (one process), a line of the recording:\n| | JSON | numbers | ÷ JSON |\n| --- | ---: | ---: | ---: |`);
  row("lay out", (r) => r.stringifyUs, (r) => r.encodeUs, "µs");
  row("read back (inflate, parse or build)", (r) => r.parseUs, (r) => r.decodeUs, "µs");
  row("… ÷ feeding it to a core", (r) => r.parseUs / r.feedUs, (r) => r.decodeUs / r.feedUs, "", 2);
  row("bytes held, compressed", (r) => r.jsonDeflated / 1e6, (r) => r.numberDeflated / 1e6, "MB");
  row("bytes before compression", (r) => r.jsonBytes / 1e6, (r) => r.numberBytes / 1e6, "MB");
}

async function replay(rec: SyntheticRecording): Promise<void> {
  const rounds = Number(values["replay-rounds"]);
  const run = (kind: string): ChildResult => {
    const out = execFileSync(process.execPath, ["--import", "tsx", join(import.meta.dirname, "replay-child.ts"), rec.file, kind], { encoding: "utf8", maxBuffer: 1 << 20 });
    return JSON.parse(out.trim().split("\n").at(-1) as string) as ChildResult;
  };
  const results: Record<(typeof KINDS)[number], ChildResult[]> = { parsed: [], spool: [] };
  for (let r = 0; r < rounds; r++) {
    // Alternated, each first in turn: a load swing on the shared machine falls on both.
    for (const kind of r % 2 === 0 ? KINDS : [...KINDS].reverse()) {
      const got = run(kind);
      results[kind].push(got);
      const sliced = got.slicedMs === undefined ? "" : `, in slices ${got.slicedMs} ms (longest loop block ${got.slicedBlockMs} ms)`;
      console.log(`round ${r + 1} ${kind}: open ${got.openMs} ms (longest loop block ${got.openBlockMs} ms), seeks ${got.seeks.join(", ")} ms${sliced}, peak RSS ${got.peakRssMB} MB, ${got.checkpoints} restore points of ${got.checkpointMB} MB`);
    }
  }
  const row = (name: string, of: (r: ChildResult) => number, unit: string) => {
    const ratios = results.spool.map((s, i) => of(s) / Math.max(1, of(results.parsed[i])));
    console.log(`| ${name} | ${range(results.parsed.map(of))} ${unit} | ${range(results.spool.map(of))} ${unit} | ${range(ratios, 2)} |`);
  };
  console.log(`\n${rounds} rounds, same-round ratios (spool ÷ parsed):\n| | parsed | spool | ÷ parsed |\n| --- | ---: | ---: | ---: |`);
  row("peak RSS", (r) => r.peakRssMB, "MB");
  row("open", (r) => r.openMs, "ms");
  row("longest loop block while opening", (r) => r.openBlockMs, "ms");
  SEEKS.forEach((f, i) => row(`seek → ${f * 100} %`, (r) => r.seeks[i], "ms"));
  row(`the ${SEEKS.length} seeks`, (r) => r.seeks.reduce((a, b) => a + b, 0), "ms");
  // CPU time: a busy machine's waits for a core stretch a seek of tens of ms several times over.
  SEEKS.forEach((f, i) => row(`seek → ${f * 100} %, CPU`, (r) => r.seeksCpu[i], "ms"));
  const spool = results.spool;
  console.log(`the ${SEEKS.length} seeks again in slices (spool): ${range(spool.map((r) => r.slicedMs ?? 0))} ms, longest loop block meanwhile ${range(spool.map((r) => r.slicedBlockMs ?? 0))} ms`);
  console.log(JSON.stringify({ bench: "recording-replay", semaphores: values["replay-semaphores"], seconds: values["replay-seconds"], textMB: Math.round(rec.textBytes / 1e6), seeks: SEEKS, ...results }));
}

try {
  if (parts.has("size")) await size();
  if (parts.has("replay") || parts.has("layout")) {
    const rec = await synthetic();
    if (parts.has("layout")) await layout(rec);
    if (parts.has("replay")) await replay(rec);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
