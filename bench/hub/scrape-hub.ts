// Child of the /metrics case (metrics-scrape.ts): the real hub (createHub, options as JSON in
// BENCH_HUB_OPTIONS) with its event loop watched. IPC: "mark" starts a window; "loop" answers the
// longest and the 99th-percentile delay of the loop since the mark (perf_hooks, 10 ms resolution)
// and the longest GC pause. BENCH_PROFILE_FILE=<f>.cpuprofile: a CPU profile of each window,
// written to <f>-<n>.cpuprofile (1: the single scrapes, 2: the agent alone, 3: with scrapers).
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";
import { createHub } from "../../main/hub/index.js";
import { WindowProfile } from "./server-common.js";

const post = (m: unknown) => process.send?.(m);
const hub = await createHub({ port: 0, log: () => undefined, ...(JSON.parse(process.env.BENCH_HUB_OPTIONS ?? "{}") as object) });
const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();
// The longest GC pause in the window: how much of the loop's longest block was the collector's.
let gcMaxMs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcMaxMs = Math.max(gcMaxMs, e.duration);
}).observe({ entryTypes: ["gc"] });

const profileFile = process.env.BENCH_PROFILE_FILE;
let windows = 0;
let profile: WindowProfile | undefined;

process.on("message", async (raw) => {
  const cmd = (raw as { cmd?: string }).cmd;
  if (cmd === "mark") {
    if (profileFile !== undefined && profileFile !== "") {
      profile = new WindowProfile(profileFile.replace(/(\.cpuprofile)?$/, `-${++windows}.cpuprofile`));
      await profile.start();
    }
    loop.reset();
    gcMaxMs = 0;
  }
  if (cmd === "loop") {
    const report = { type: "loop", maxMs: loop.max / 1e6, p99Ms: loop.percentile(99) / 1e6, gcMaxMs, rss: process.memoryUsage().rss };
    await profile?.stop();
    profile = undefined;
    post(report);
  }
});
process.on("disconnect", () => void hub.close().then(() => process.exit(0)));
post({ type: "listening", url: hub.url });
