// A long recording without waiting for it: the lines a live hub records (recorder.ts) for
// `agents` × `perAgent` semaphores sampled every second for `seconds`, with the hub's tick each
// second, written compactly (recording-writer.ts) as the app records. Samples from bench/hub's
// workload: load drifts and busy spells saturate pools, so alerts rise and clear along the way.
import { DEFAULT_THRESHOLDS } from "../../shared/alerts/index.js";
import { PROTOCOL_VERSION } from "../../shared/protocol/index.js";
import { GzipRecorder } from "../../main/hub/recording/recording-writer.js";
import { hello, infos, SemaphoreModel } from "../hub/workload.js";

export interface SyntheticRecording {
  file: string;
  from: number;
  to: number;
  lines: number;
  textBytes: number;
  fileBytes: number;
}

export async function writeSyntheticRecording(file: string, agents: number, perAgent: number, seconds: number): Promise<SyntheticRecording> {
  const t0 = 1_700_000_000_000;
  const out = new GzipRecorder(file, () => undefined, { flushMs: 60_000 });
  out.write({ r: t0, k: "start", p: { format: 1, hubVersion: "bench", protocol: PROTOCOL_VERSION, thresholds: DEFAULT_THRESHOLDS } });
  const models: SemaphoreModel[][] = [];
  for (let a = 0; a < agents; a++) {
    const id = `bench-${a}`;
    const sems = infos(perAgent);
    out.write({ r: t0, k: "hello", a: id, p: { ...hello(id, a), startedAt: t0 } });
    out.write({ r: t0, k: "register", a: id, p: { semaphores: sems } });
    models.push(sems.map((s, i) => new SemaphoreModel(s, a * 1000 + i + 1)));
  }
  for (let s = 1; s <= seconds; s++) {
    const r = t0 + s * 1000;
    for (let a = 0; a < agents; a++) {
      out.write({ r: r + a, k: "samples", a: `bench-${a}`, p: { seq: s, t: r, intervalMs: 1000, items: models[a].map((m) => m.sample()) } });
    }
    out.write({ r: r + agents, k: "tick" });
    // Let the compressor drain now and then, as a live hub's would between batches.
    if (s % 60 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  out.close();
  await out.closed;
  if (out.failed !== null) throw new Error(`cannot write ${file}: ${out.failed}`);
  return { file, from: t0, to: t0 + seconds * 1000 + agents, lines: out.lines, textBytes: out.textBytes, fileBytes: out.bytes };
}
