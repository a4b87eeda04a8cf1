// One replay in a process of its own, so its peak memory is its own: opens the recording as the
// dashboard's replay does (ReplaySession), or as the replay before the spool did (`parsed`,
// parsed-replay.ts), then seeks back and forth across it. Prints one JSON line: open and each seek
// in ms (and each seek's CPU time, which a busy machine's waits for a core leave out), the longest event-loop block while opening, the restore points kept, the heap after the
// seeks, and the process's peak RSS; for the dashboard's replay, the same seeks again in slices as
// its hub runs them (seekInSlices): their time in all and the longest event-loop block meanwhile.
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { ReplaySession, type ReplaySessionOptions } from "../../main/hub/recording/replay-session.js";
import { ParsedReplay } from "./parsed-replay.js";
import { SEEKS } from "./seeks.js";

const [file, kind = "spool", options = "{}"] = process.argv.slice(2);
const ms = (t0: number) => Math.round(performance.now() - t0);
const loop = monitorEventLoopDelay({ resolution: 5 });
loop.enable();
const t0 = performance.now();
const replay = kind === "parsed" ? await ParsedReplay.open(file) : await ReplaySession.open(file, JSON.parse(options) as ReplaySessionOptions);
const open = ms(t0);
loop.disable();
const span = replay.to - replay.from;
const seeks: number[] = [];
const seeksCpu: number[] = [];
for (const f of SEEKS) {
  const t = performance.now();
  const cpu = process.cpuUsage();
  replay.seek(replay.from + span * f);
  seeks.push(ms(t));
  const used = process.cpuUsage(cpu);
  seeksCpu.push(Math.round((used.user + used.system) / 1000));
}
let sliced: { slicedMs: number; slicedBlockMs: number } | undefined;
if (replay instanceof ReplaySession) {
  const during = monitorEventLoopDelay({ resolution: 1 });
  during.enable();
  const t = performance.now();
  for (const f of SEEKS) await replay.seekInSlices(replay.from + span * f);
  sliced = { slicedMs: ms(t), slicedBlockMs: Math.round(during.max / 1e6) };
  during.disable();
}
const held = replay instanceof ReplaySession ? replay.held : undefined;
if (replay instanceof ReplaySession) replay.close();
console.log(
  JSON.stringify({
    kind,
    openMs: open,
    openBlockMs: Math.round(loop.max / 1e6),
    seeks,
    seeksCpu,
    ...sliced,
    checkpoints: held?.checkpoints ?? 0,
    checkpointMB: Math.round((held?.checkpointBytes ?? 0) / 1e6),
    marks: replay instanceof ReplaySession ? replay.marks.length : replay.marks,
    heapMB: Math.round(process.memoryUsage().heapUsed / 1e6),
    peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
  }),
);
