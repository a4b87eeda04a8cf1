// One replay in a process of its own, so its peak memory is its own: opens the recording as the
// dashboard's replay does (ReplaySession), then seeks back and forth across it. Prints one JSON
// line: open and each seek in ms, the restore points it keeps, the heap after the seeks, and the
// process's peak RSS.
import { performance } from "node:perf_hooks";
import { ReplaySession } from "../../main/hub/recording/replay-session.js";

const file = process.argv[2];
const ms = (t0: number) => Math.round(performance.now() - t0);
const t0 = performance.now();
const session = await ReplaySession.open(file);
const open = ms(t0);
const span = session.to - session.from;
const seeks: { to: string; ms: number }[] = [];
for (const f of [0.5, 0.25, 0.75, 0.1, 0.9]) {
  const t = performance.now();
  session.seek(session.from + span * f);
  seeks.push({ to: `${f * 100}%`, ms: ms(t) });
}
session.close();
const held = session.held;
console.log(
  JSON.stringify({
    openMs: open,
    seeks,
    checkpoints: held.checkpoints,
    checkpointMB: Math.round(held.checkpointBytes / 1e6),
    marks: session.marks.length,
    lines: session.summary.lines,
    heapMB: Math.round(process.memoryUsage().heapUsed / 1e6),
    peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
  }),
);
