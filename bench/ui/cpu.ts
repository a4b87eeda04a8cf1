// node --import tsx bench/ui/cpu.ts — what the dashboard's main thread spends, in CPU time.
//
// bench/ui/run.ts measures wall clock, which on a shared machine is mostly waiting for a CPU.
// This runs the same setup (web-mode hub, the bench's 500-semaphore feed, an hour of history
// for one semaphore) under a Chromium trace and sums each main-thread task's thread duration
// (`tdur`, which other processes do not inflate): 15 s on the overview, then four opens of the
// 1 h detail view (each followed by 1 s live) and four returns to the overview.
// Prints one line per phase: CPU ms, wall ms, and the five longest tasks by CPU.
// BENCH_CPU_DETAIL=1 adds, per phase, where the CPU went (each trace event's self time, summed
// by name: a delta's receive and script, a frame's layout, paint and canvas commit, a GC's
// phases) and the same for its three longest tasks. Its extra trace categories cost CPU too:
// compare detail runs with detail runs.
// BENCH_CPU_LIVE_S=<s> ends with the 1 h detail view open and live for that long, the phase where
// bench:ui's rare long task (a WebSocket message) was seen.
import { join } from "node:path";
import type { CDPSession } from "playwright-core";
import { createHub } from "../../main/hub/index.js";
import { semaphoreKey } from "../../shared/protocol/index.js";
import { buildRenderer, launchBrowser, sleep, spawnAgent, until } from "../../test/e2e/browser.js";
import { sampleOf } from "./samples.js";

const KEY = semaphoreKey("svc-00", "inst-00", "sem-0");
const OPENS = 4;
const DETAIL = process.env.BENCH_CPU_DETAIL === "1";
const LIVE_S = Number(process.env.BENCH_CPU_LIVE_S ?? 0);

interface TraceEvent {
  name: string;
  cat?: string;
  ph: string;
  pid: number;
  tid: number;
  ts: number;
  dur?: number;
  tdur?: number;
  args?: { name?: string };
}

async function trace(cdp: CDPSession, run: () => Promise<void>): Promise<TraceEvent[]> {
  const events: TraceEvent[] = [];
  cdp.on("Tracing.dataCollected", (e) => events.push(...(e.value as unknown as TraceEvent[])));
  const done = new Promise<void>((r) => cdp.once("Tracing.tracingComplete", () => r()));
  const categories = ["devtools.timeline", "disabled-by-default-devtools.timeline", "toplevel", "blink.user_timing", ...(DETAIL ? ["v8", "blink", "cc", "gpu", "disabled-by-default-v8.gc", "cppgc", "disabled-by-default-cppgc"] : [])];
  await cdp.send("Tracing.start", { categories: categories.join(","), transferMode: "ReportEvents" });
  await run();
  await cdp.send("Tracing.end");
  await done;
  return events;
}

interface Task {
  ts: number;
  dur: number;
  tdur: number;
  /** CPU ms of self time by event name inside the task (BENCH_CPU_DETAIL). */
  parts: Map<string, number>;
}

/** Top-level tasks of the renderer's main thread, and the page's performance.mark()s by name. */
function digest(events: TraceEvent[]): { tasks: Task[]; marks: Map<string, number> } {
  const main = new Set(events.filter((e) => e.ph === "M" && e.name === "thread_name" && e.args?.name === "CrRendererMain").map((e) => `${e.pid}:${e.tid}`));
  const marks = new Map<string, number>();
  for (const e of events) if ((e.cat ?? "").includes("blink.user_timing") && !marks.has(e.name)) marks.set(e.name, e.ts);
  const all = events
    .filter((e) => main.has(`${e.pid}:${e.tid}`) && e.ph === "X" && (e.name === "RunTask" || e.name === "ThreadControllerImpl::RunTask") && e.tdur !== undefined)
    .map((e): Task => ({ ts: e.ts, dur: e.dur ?? 0, tdur: e.tdur ?? 0, parts: new Map() }))
    .sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  // Task events nest (one RunTask inside another): keep the outermost.
  const tasks: Task[] = [];
  let end = -1;
  for (const t of all) {
    if (t.ts < end) continue;
    tasks.push(t);
    end = t.ts + t.dur;
  }
  if (DETAIL) attribute(tasks, events.filter((e) => main.has(`${e.pid}:${e.tid}`) && e.ph === "X" && e.tdur !== undefined && e.name !== "RunTask" && e.name !== "ThreadControllerImpl::RunTask"));
  return { tasks, marks };
}

/** Fills each task's parts with the CPU each event name spent itself (its own time less the events nested in it). */
function attribute(tasks: Task[], inner: TraceEvent[]): void {
  inner.sort((a, b) => a.ts - b.ts || (b.dur ?? 0) - (a.dur ?? 0));
  let i = 0;
  for (const task of tasks) {
    const end = task.ts + task.dur;
    while (i < inner.length && inner[i].ts < task.ts) i++;
    const stack: { end: number; name: string; self: number }[] = [];
    const close = (upTo: number) => {
      while (stack.length > 0 && stack[stack.length - 1].end <= upTo) {
        const top = stack.pop();
        if (top !== undefined) task.parts.set(top.name, (task.parts.get(top.name) ?? 0) + Math.max(0, top.self) / 1000);
      }
    };
    for (let j = i; j < inner.length && inner[j].ts < end; j++) {
      const e = inner[j];
      close(e.ts);
      const t = e.tdur ?? 0;
      if (stack.length > 0) stack[stack.length - 1].self -= t;
      stack.push({ end: e.ts + (e.dur ?? 0), name: e.name, self: t });
    }
    close(Infinity);
  }
}

async function main(): Promise<void> {
  const built = await buildRenderer();
  const hub = await createHub({ port: 0, staticDir: built.dir, log: () => undefined });
  const now = Date.now();
  for (let s = 0; s < 3600; s++) hub.history.push(KEY, sampleOf("sem-0", 4, s - 3600, 0), now - (3600 - s) * 1000, 1000);
  const feeder = spawnAgent(join(import.meta.dirname, "feeder.ts"), [hub.url, "50", "10"]);
  const browser = await launchBrowser();
  const page = browser.page;
  const mark = (name: string) => page.evaluate((n) => performance.mark(n), name);
  try {
    await feeder.waitFor("ready", 30_000);
    await page.goto(hub.url);
    await page.getByTestId("overview").waitFor();
    await until("500 semaphores", () => page.evaluate(() => (window as unknown as { __semscope: { store: { semaphoreCount: number } } }).__semscope.store.semaphoreCount), (n) => n === 500, 20_000);
    await sleep(4000);
    const cdp = await page.context().newCDPSession(page);
    const events = await trace(cdp, async () => {
      await mark("overview");
      await sleep(15_000);
      for (let i = 0; i < OPENS; i++) {
        await mark(`open-${i}`);
        await page.evaluate((h) => (location.hash = h), `#/s/${encodeURIComponent(KEY)}?w=1h`);
        await page.locator(".chart-card .uplot").first().waitFor();
        await sleep(1000);
        await mark(`back-${i}`);
        await page.evaluate(() => (location.hash = "#/"));
        await page.getByTestId("overview").waitFor();
        await sleep(1500);
      }
      await mark("end");
      if (LIVE_S > 0) {
        await page.evaluate((h) => (location.hash = h), `#/s/${encodeURIComponent(KEY)}?w=1h`);
        await page.locator(".chart-card .uplot").first().waitFor();
        await sleep(1500);
        await mark("live");
        await sleep(LIVE_S * 1000);
        await mark("live-end");
      }
    });
    const { tasks, marks } = digest(events);
    const phase = (label: string, from: string, to: string) => {
      const a = marks.get(from);
      const b = marks.get(to);
      if (a === undefined || b === undefined) return console.log(`${label}: marks missing`);
      const ts = tasks.filter((t) => t.ts >= a && t.ts < b);
      const cpu = ts.reduce((s, t) => s + t.tdur, 0) / 1000;
      const wall = ts.reduce((s, t) => s + t.dur, 0) / 1000;
      const longest = [...ts].sort((x, y) => y.tdur - x.tdur);
      const top = longest.slice(0, 5).map((t) => t.tdur / 1000);
      console.log(`${label.padEnd(24)} cpu ${cpu.toFixed(0).padStart(5)} ms  wall ${wall.toFixed(0).padStart(5)} ms  longest tasks (cpu) ${top.map((x) => x.toFixed(1)).join(", ")} ms`);
      if (DETAIL) {
        const sum = new Map<string, number>();
        for (const t of ts) for (const [n, ms] of t.parts) sum.set(n, (sum.get(n) ?? 0) + ms);
        const totals = [...sum].sort((x, y) => y[1] - x[1]).slice(0, 8);
        console.log(`    phase total: ${totals.map(([n, ms]) => `${n} ${ms.toFixed(0)}`).join(", ")}`);
        for (const t of longest.slice(0, 3)) {
          const parts = [...t.parts].filter(([, ms]) => ms >= 0.5).sort((x, y) => y[1] - x[1]);
          console.log(`    ${(t.tdur / 1000).toFixed(1)} ms (wall ${(t.dur / 1000).toFixed(1)}): ${parts.map(([n, ms]) => `${n} ${ms.toFixed(1)}`).join(", ")}`);
        }
      }
    };
    phase("overview 15 s", "overview", "open-0");
    for (let i = 0; i < OPENS; i++) {
      phase(`open ${i} (+1 s live)`, `open-${i}`, `back-${i}`);
      phase(`back ${i}`, `back-${i}`, i + 1 < OPENS ? `open-${i + 1}` : "end");
    }
    if (LIVE_S > 0) {
      phase(`detail live ${LIVE_S} s`, "live", "live-end");
      if (process.env.BENCH_CPU_DUMP === "1") {
        const a = marks.get("live") ?? 0;
        const b = marks.get("live-end") ?? 0;
        const live = tasks.filter((t) => t.ts >= a && t.ts < b).sort((x, y) => y.tdur - x.tdur).slice(0, 3);
        for (const t of live) {
          console.log(`  task ${(t.tdur / 1000).toFixed(1)} ms cpu, ${(t.dur / 1000).toFixed(1)} wall:`);
          const inner = events.filter((e) => e.ts >= t.ts && e.ts < t.ts + t.dur && (e.dur ?? 0) >= 500).sort((x, y) => x.ts - y.ts);
          for (const e of inner.slice(0, 40)) console.log(`    +${((e.ts - t.ts) / 1000).toFixed(1)} ${e.name} [${e.cat}] tid ${e.tid} dur ${((e.dur ?? 0) / 1000).toFixed(1)} tdur ${((e.tdur ?? 0) / 1000).toFixed(1)} ${JSON.stringify(e.args ?? {}).slice(0, 160)}`);
        }
      }
    }
    if (browser.errors.length > 0) console.log(`page errors: ${browser.errors.join(" | ")}`);
  } finally {
    await feeder.kill("SIGTERM");
    await browser.close();
    await hub.close();
    built.remove();
  }
}

await main();
