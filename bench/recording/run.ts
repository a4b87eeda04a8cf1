// Recordings: (size) the built-in demo fleet (agent/demo, six service processes) streams to a hub
// that records compactly (gzip, recording-writer.ts) for a while; the same lines as plain NDJSON
// (the headless hub's --record) are the gunzipped file; prints bytes per semaphore-hour of both.
// (replay) a synthetic recording (synthetic.ts, default 100 semaphores for an hour) opened as the
// dashboard's replay opens it, in a child process (replay-child.ts): open and seek times, peak RSS.
// Usage: npm run bench:recording [-- --seconds 120 --parts size,replay --replay-seconds 3600 --replay-semaphores 100]
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { gunzipSync } from "node:zlib";
import { startDemo } from "../../agent/demo/fleet.js";
import { createHub } from "../../main/hub/index.js";
import { writeSyntheticRecording } from "./synthetic.js";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "120" },
    parts: { type: "string", default: "size,replay" },
    "replay-seconds": { type: "string", default: "3600" },
    "replay-semaphores": { type: "string", default: "100" },
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

async function replay(): Promise<void> {
  const seconds = Number(values["replay-seconds"]);
  const semaphores = Number(values["replay-semaphores"]);
  const agents = Math.max(1, Math.round(semaphores / 10));
  const rec = await writeSyntheticRecording(join(dir, "synthetic.ndjson.gz"), agents, Math.round(semaphores / agents), seconds);
  console.log(`replay: ${agents * Math.round(semaphores / agents)} semaphores × ${seconds} s: ${rec.lines} lines, ${(rec.textBytes / 1e6).toFixed(0)} MB of text, ${(rec.fileBytes / 1e6).toFixed(1)} MB gzip`);
  const out = execFileSync(process.execPath, ["--import", "tsx", join(import.meta.dirname, "replay-child.ts"), rec.file], { encoding: "utf8", maxBuffer: 1 << 20 });
  const r = JSON.parse(out.trim().split("\n").at(-1) as string) as { openMs: number; seeks: { to: string; ms: number }[]; checkpoints: number; checkpointMB: number; marks: number; heapMB: number; peakRssMB: number };
  console.log(`replay: open ${r.openMs} ms (${r.marks} alerts on the timeline, ${r.checkpoints} restore points of ${r.checkpointMB} MB); seek ${r.seeks.map((s) => `→${s.to} ${s.ms} ms`).join(", ")}`);
  console.log(`replay: peak RSS ${r.peakRssMB} MB, heap after the seeks ${r.heapMB} MB`);
  console.log(JSON.stringify({ bench: "recording-replay", semaphores, seconds, textMB: Math.round(rec.textBytes / 1e6), ...r }));
}

try {
  if (parts.has("size")) await size();
  if (parts.has("replay")) await replay();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
