// The IPC side every server child shares: CPU time over a measurement window, memory after it,
// and (BENCH_PROFILE_FILE, set by run.ts from BENCH_CPU_PROF) a CPU profile of that window alone.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { Session } from "node:inspector/promises";
import type { ChildMessage } from "./messages.js";

export interface ServerHooks {
  extra?(): { historyBytes: number; histories: number };
  hour?(): { bytesPerSemaphore: number; growthPerHour: number; semaphores: number };
  close(): Promise<void>;
}

const post = (m: ChildMessage) => process.send?.(m);
const gc = (globalThis as { gc?: () => void }).gc;

const HEAP = process.env.BENCH_HEAP_PROF === "1";

/** Profiles from "mark" to "report" when asked to: a whole-process profile is mostly start-up and connecting. */
class WindowProfile {
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

export function serve(url: string, hooks: ServerHooks): void {
  let cpu0 = process.cpuUsage();
  let wall0 = performance.now();
  const profile = new WindowProfile(process.env.BENCH_PROFILE_FILE);
  process.on("message", async (raw) => {
    const m = raw as { cmd: string };
    if (m.cmd === "mark") {
      await profile.start();
      cpu0 = process.cpuUsage();
      wall0 = performance.now();
    } else if (m.cmd === "report") {
      const cpu = process.cpuUsage(cpu0);
      const wallMs = performance.now() - wall0;
      await profile.stop();
      // After the window, so the forced GC is not charged to it.
      gc?.();
      const { rss, heapUsed } = process.memoryUsage();
      post({ type: "report", cpuUs: cpu.user + cpu.system, wallMs, rss, heapUsed, ...hooks.extra?.() });
    } else if (m.cmd === "hour" && hooks.hour) {
      post({ type: "hour", ...hooks.hour() });
    } else if (m.cmd === "close") {
      void hooks.close().then(() => process.exit(0));
    }
  });
  process.on("disconnect", () => process.exit(0));
  post({ type: "listening", url });
}
