// Child of the /metrics case (metrics-scrape.ts): the real hub (createHub, options as JSON in
// BENCH_HUB_OPTIONS) with its event loop watched. IPC: "mark" starts a window; "loop" answers the
// longest and the 99th-percentile delay of the loop since the mark (perf_hooks, 10 ms resolution)
// and the longest GC pauses, and the main thread's CPU and run-queue wait in its gaps (below).
// BENCH_PROFILE_FILE=<f>.cpuprofile: a CPU profile of each window,
// written to <f>-<n>.cpuprofile (1: the single scrapes, then the agent alone and with scrapers in turn).
import { readFileSync } from "node:fs";
import { constants, monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";
import { createHub } from "../../main/hub/index.js";
import { WindowProfile } from "./server-common.js";

const post = (m: unknown) => process.send?.(m);
const hub = await createHub({ port: 0, log: () => undefined, ...(JSON.parse(process.env.BENCH_HUB_OPTIONS ?? "{}") as object) });
const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();
// The longest GC pauses in the window, young (scavenges) and full: how much of the loop's longest
// block was the collector's, and which one.
let gcMaxMs = 0;
let gcMinorMaxMs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gcMaxMs = Math.max(gcMaxMs, e.duration);
    if ((e as unknown as { detail: { kind: number } }).detail.kind === constants.NODE_PERFORMANCE_GC_MINOR) gcMinorMaxMs = Math.max(gcMinorMaxMs, e.duration);
  }
}).observe({ entryTypes: ["gc"] });

// The loop's gaps split by the kernel's account of the main thread (Linux schedstat: time on a
// CPU, time runnable but waiting for one): on a machine shared past its cores, a gap is mostly
// waiting, and the CPU the hub itself spent in its longest gap is what it would block an idle
// core for. A 5 ms timer; a gap is the time between two of its ticks.
const SCHEDSTAT = "/proc/thread-self/schedstat";
function sched(): [cpuMs: number, waitMs: number] {
  try {
    const [cpu, wait] = readFileSync(SCHEDSTAT, "utf8").split(" ").map(Number);
    return [cpu / 1e6, wait / 1e6];
  } catch {
    return [Number.NaN, Number.NaN];
  }
}
let gaps = { wallMs: 0, cpuMs: 0, waitMs: 0, maxCpuMs: 0 };
let lastTick = { at: performance.now(), sched: sched() };
setInterval(() => {
  const at = performance.now();
  const [cpu, wait] = sched();
  const wallMs = at - lastTick.at;
  const cpuMs = cpu - lastTick.sched[0];
  if (wallMs > gaps.wallMs) gaps = { ...gaps, wallMs, cpuMs, waitMs: wait - lastTick.sched[1] };
  if (cpuMs > gaps.maxCpuMs) gaps.maxCpuMs = cpuMs;
  lastTick = { at, sched: [cpu, wait] };
}, 5).unref();

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
    gcMinorMaxMs = 0;
    gaps = { wallMs: 0, cpuMs: 0, waitMs: 0, maxCpuMs: 0 };
  }
  if (cmd === "loop") {
    const report = { type: "loop", maxMs: loop.max / 1e6, p99Ms: loop.percentile(99) / 1e6, gcMaxMs, gcMinorMaxMs, gaps, rss: process.memoryUsage().rss };
    await profile?.stop();
    profile = undefined;
    post(report);
  }
});
process.on("disconnect", () => void hub.close().then(() => process.exit(0)));
post({ type: "listening", url: hub.url });
