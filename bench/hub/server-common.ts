// The IPC side every server child shares: CPU time over a measurement window, memory after it,
// and (BENCH_PROFILE_FILE, set by run.ts from BENCH_CPU_PROF) a CPU profile of that window alone.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { Session } from "node:inspector/promises";
import { constants, monitorEventLoopDelay, PerformanceObserver, type IntervalHistogram } from "node:perf_hooks";
import type { ChildMessage, GcSummary } from "./messages.js";

export interface ServerHooks {
  extra?(): { historyBytes: number; histories: number };
  hour?(): { bytesPerSemaphore: number; growthPerHour: number; semaphores: number };
  close(): Promise<void>;
}

const post = (m: ChildMessage) => process.send?.(m);
const gc = (globalThis as { gc?: () => void }).gc;

const HEAP = process.env.BENCH_HEAP_PROF === "1";
/** Under --trace-gc(-nvp), the window's start and end are marked in the trace, to tell its GCs from start-up's. */
const TRACING_GC = process.execArgv.some((a) => a.startsWith("--trace-gc"));

/** Profiles from "mark" to "report" when asked to: a whole-process profile is mostly start-up and connecting. */
export class WindowProfile {
  private session: Session | undefined;
  constructor(private readonly file: string | undefined) {}

  async start(): Promise<void> {
    if (this.file === undefined || this.file === "") return;
    this.session = new Session();
    this.session.connect();
    await this.session.post("Profiler.enable");
    await this.session.post("Profiler.start");
    // BENCH_HEAP_PROF=1: also where what outlives a young GC was allocated (promoted objects make
    // every scavenge dearer; that is how pretenured sample copies were found, fast-samples.ts).
    if (HEAP) await this.session.post("HeapProfiler.startSampling", { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: false } as never);
  }

  async stop(): Promise<void> {
    const s = this.session;
    if (s === undefined || this.file === undefined) return;
    this.session = undefined;
    const heap = HEAP ? (await s.post("HeapProfiler.stopSampling")).profile : undefined;
    const { profile } = await s.post("Profiler.stop");
    s.disconnect();
    mkdirSync(dirname(this.file), { recursive: true });
    writeFileSync(this.file, JSON.stringify(profile));
    if (heap !== undefined) writeFileSync(this.file.replace(/\.cpuprofile$/, ".heapprofile"), JSON.stringify(heap));
  }
}

/**
 * Garbage collections and event-loop stalls over the window: where an ack's tail comes from
 * (every ack waits for whatever holds the loop when its message arrives).
 */
class WindowPauses {
  private gcs: { kind: number; ms: number }[] = [];
  private readonly observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) this.gcs.push({ kind: (e as unknown as { detail: { kind: number } }).detail.kind, ms: e.duration });
  });
  private delay: IntervalHistogram | undefined;

  start(): void {
    this.gcs = [];
    this.observer.observe({ entryTypes: ["gc"] });
    this.delay = monitorEventLoopDelay({ resolution: 5 });
    this.delay.enable();
  }

  /** Undefined unless start() began a window. */
  stop(): GcSummary | undefined {
    const d = this.delay;
    if (d === undefined) return undefined;
    this.delay = undefined;
    this.observer.disconnect();
    d.disable();
    const of = (kind: number) => {
      const list = this.gcs.filter((g) => g.kind === kind);
      return { count: list.length, ms: list.reduce((n, g) => n + g.ms, 0), maxMs: Math.max(0, ...list.map((g) => g.ms)) };
    };
    return {
      minor: of(constants.NODE_PERFORMANCE_GC_MINOR),
      major: of(constants.NODE_PERFORMANCE_GC_MAJOR),
      incremental: of(constants.NODE_PERFORMANCE_GC_INCREMENTAL),
      loopDelayP99Ms: d.percentile(99) / 1e6,
      loopDelayMaxMs: d.max / 1e6,
    };
  }
}

export function serve(url: string, hooks: ServerHooks): void {
  let cpu0 = process.cpuUsage();
  let wall0 = performance.now();
  const profile = new WindowProfile(process.env.BENCH_PROFILE_FILE);
  const pauses = new WindowPauses();
  process.on("message", async (raw) => {
    const m = raw as { cmd: string };
    if (m.cmd === "mark") {
      if (TRACING_GC) process.stdout.write("[bench window start]\n");
      await profile.start();
      pauses.start();
      cpu0 = process.cpuUsage();
      wall0 = performance.now();
    } else if (m.cmd === "report") {
      const cpu = process.cpuUsage(cpu0);
      const wallMs = performance.now() - wall0;
      const gcs = pauses.stop();
      if (TRACING_GC) process.stdout.write("[bench window end]\n");
      await profile.stop();
      // After the window, so the forced GC is not charged to it.
      gc?.();
      const { rss, heapUsed } = process.memoryUsage();
      post({ type: "report", cpuUs: cpu.user + cpu.system, wallMs, rss, heapUsed, gc: gcs, ...hooks.extra?.() });
    } else if (m.cmd === "hour" && hooks.hour) {
      post({ type: "hour", ...hooks.hour() });
    } else if (m.cmd === "close") {
      void hooks.close().then(() => process.exit(0));
    }
  });
  process.on("disconnect", () => process.exit(0));
  post({ type: "listening", url });
}
