// node --import tsx bench/ui/cpu.ts — what the dashboard's main thread spends, in CPU time.
//
// bench/ui/run.ts measures wall clock, which on a shared machine is mostly waiting for a CPU.
// This runs the same setup (web-mode hub, the bench's 500-semaphore feed, an hour of history
// for one semaphore) under a Chromium trace and sums each main-thread task's thread duration
// (`tdur`, which other processes do not inflate): 15 s on the overview, then four opens of the
// 1 h detail view (each followed by 1 s live) and four returns to the overview.
// Prints one line per phase: CPU ms, wall ms, and the five longest tasks by CPU.
import { join } from "node:path";
import type { CDPSession } from "playwright-core";
import { createHub } from "../../main/hub/index.js";
import { semaphoreKey } from "../../shared/protocol/index.js";
import { buildRenderer, launchBrowser, sleep, spawnAgent, until } from "../../test/e2e/browser.js";
import { sampleOf } from "./samples.js";

const KEY = semaphoreKey("svc-00", "inst-00", "sem-0");
const OPENS = 4;

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
  await cdp.send("Tracing.start", { categories: "devtools.timeline,disabled-by-default-devtools.timeline,toplevel,blink.user_timing", transferMode: "ReportEvents" });
  await run();
  await cdp.send("Tracing.end");
  await done;
  return events;
}

/** Top-level tasks of the renderer's main thread, and the page's performance.mark()s by name. */
function digest(events: TraceEvent[]): { tasks: { ts: number; dur: number; tdur: number }[]; marks: Map<string, number> } {
  const main = new Set(events.filter((e) => e.ph === "M" && e.name === "thread_name" && e.args?.name === "CrRendererMain").map((e) => `${e.pid}:${e.tid}`));
  const marks = new Map<string, number>();
  for (const e of events) if ((e.cat ?? "").includes("blink.user_timing") && !marks.has(e.name)) marks.set(e.name, e.ts);
  const all = events
    .filter((e) => main.has(`${e.pid}:${e.tid}`) && e.ph === "X" && (e.name === "RunTask" || e.name === "ThreadControllerImpl::RunTask") && e.tdur !== undefined)
    .map((e) => ({ ts: e.ts, dur: e.dur ?? 0, tdur: e.tdur ?? 0 }))
    .sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  // Task events nest (one RunTask inside another): keep the outermost.
  const tasks: typeof all = [];
  let end = -1;
  for (const t of all) {
    if (t.ts < end) continue;
    tasks.push(t);
    end = t.ts + t.dur;
  }
  return { tasks, marks };
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
    });
    const { tasks, marks } = digest(events);
    const phase = (label: string, from: string, to: string) => {
      const a = marks.get(from);
      const b = marks.get(to);
      if (a === undefined || b === undefined) return console.log(`${label}: marks missing`);
      const ts = tasks.filter((t) => t.ts >= a && t.ts < b);
      const cpu = ts.reduce((s, t) => s + t.tdur, 0) / 1000;
      const wall = ts.reduce((s, t) => s + t.dur, 0) / 1000;
      const top = ts.map((t) => t.tdur / 1000).sort((x, y) => y - x).slice(0, 5);
      console.log(`${label.padEnd(24)} cpu ${cpu.toFixed(0).padStart(5)} ms  wall ${wall.toFixed(0).padStart(5)} ms  longest tasks (cpu) ${top.map((x) => x.toFixed(1)).join(", ")} ms`);
    };
    phase("overview 15 s", "overview", "open-0");
    for (let i = 0; i < OPENS; i++) {
      phase(`open ${i} (+1 s live)`, `open-${i}`, `back-${i}`);
      phase(`back ${i}`, `back-${i}`, i + 1 < OPENS ? `open-${i + 1}` : "end");
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
