// Child of the /metrics case (metrics-scrape.ts): the real hub (createHub, options as JSON in
// BENCH_HUB_OPTIONS) with its event loop watched. IPC: "mark" starts a window; "loop" answers the
// longest and the 99th-percentile delay of the loop since the mark (perf_hooks, 10 ms resolution)
// and the longest GC pause.
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";
import { createHub } from "../../main/hub/index.js";

const post = (m: unknown) => process.send?.(m);
const hub = await createHub({ port: 0, log: () => undefined, ...(JSON.parse(process.env.BENCH_HUB_OPTIONS ?? "{}") as object) });
const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();
// The longest GC pause in the window: how much of the loop's longest block was the collector's.
let gcMaxMs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcMaxMs = Math.max(gcMaxMs, e.duration);
}).observe({ entryTypes: ["gc"] });

process.on("message", (raw) => {
  const cmd = (raw as { cmd?: string }).cmd;
  if (cmd === "mark") {
    loop.reset();
    gcMaxMs = 0;
  }
  if (cmd === "loop") post({ type: "loop", maxMs: loop.max / 1e6, p99Ms: loop.percentile(99) / 1e6, gcMaxMs, rss: process.memoryUsage().rss });
});
process.on("disconnect", () => void hub.close().then(() => process.exit(0)));
post({ type: "listening", url: hub.url });
