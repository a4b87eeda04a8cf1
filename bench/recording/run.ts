// Recording size: the built-in demo fleet (agent/demo, six service processes) streams to a hub
// that records compactly (gzip, recording-writer.ts) for a while; the same lines as plain NDJSON
// (the headless hub's --record) are the gunzipped file. Prints bytes per semaphore-hour of both.
// Usage: npm run bench:recording [-- --seconds 120]
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { gunzipSync } from "node:zlib";
import { startDemo } from "../../agent/demo/fleet.js";
import { createHub } from "../../main/hub/index.js";

const { values } = parseArgs({ options: { seconds: { type: "string", default: "120" } } });
const seconds = Number(values.seconds);
const dir = mkdtempSync(join(tmpdir(), "semscope-bench-rec-"));
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
rmSync(dir, { recursive: true, force: true });
