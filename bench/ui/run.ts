// npm run bench:ui — the dashboard's cost in a real Chromium (docs: issue 4 §6).
//
// A web-mode hub serving the production renderer build, fed by one child process of raw
// socket.io-client agents (bench/ui/feeder.ts: 50 agents × 10 semaphores = 500, 1 Hz each,
// spread over the second). One semaphore's history is pre-filled with an hour of 1 s samples
// pushed straight into hub.history before the feed starts (not streamed: a recording replayed
// through /agent is paced by the hub's per-connection budget).
//
// Measured with the page's own performance APIs, over 60 s on the overview (BENCH_QUICK=1: 15 s)
// and 30 s on the detail view (quick: 8 s):
//   - long tasks: PerformanceObserver("longtask"), entries over 50 ms;
//   - per-update scripting time: the renderer exposes window.__semscope = { store, frameStats }
//     (main.tsx). The bench wraps store.applyDelta (the /ui delta apply) and times, for each
//     delta: the apply itself + React's re-render (React flushes useSyncExternalStore updates in
//     a microtask queued during the apply; a microtask queued after the apply runs after it) +
//     the shared animation-frame pass it triggers (frameStats.totalMs between this delta and the
//     next: every chart / sparkline canvas redraw). No renderer change was needed. Not included:
//     socket.io's JSON parse of the packet, and React passive effects (a long one still shows
//     as a long task);
//   - detail first render: from the hash change that opens #/s/<key>?w=1h (what a row click
//     does) to the first uPlot chart created with its history and drawn (a MutationObserver sees
//     the chart's root; a MessageChannel task after it runs once uPlot's draw microtask is done).
//     Five opens; the JSON reports the median. Same for the 15 m window (900 points of the 1 s
//     tier), in the table only.
// Prints a table, then as the LAST line:
// {"bench":"ui","semaphores":500,"long_tasks":N,"update_p95_ms":…,"update_p50_ms":…,"detail_first_render_ms":…}
import { join } from "node:path";
import type { Page } from "playwright-core";
import { createHub } from "../../main/hub/index.js";
import { semaphoreKey } from "../../shared/protocol/index.js";
import { buildRenderer, launchBrowser, sleep, spawnAgent, until } from "../../test/e2e/browser.js";
import { sampleOf } from "./samples.js";

const QUICK = process.env.BENCH_QUICK === "1";
const OVERVIEW_S = QUICK ? 15 : 60;
const DETAIL_S = QUICK ? 8 : 30;
const AGENTS = 50;
const PER_AGENT = 10;
const SEMAPHORES = AGENTS * PER_AGENT;
const HISTORY_S = 3600;
const DETAIL_KEY = semaphoreKey("svc-00", "inst-00", "sem-0");

// Types are erased before page.evaluate serializes a callback, so the page-side code can name it too.
interface Recorder {
  recording: boolean;
  apply: number[];
  react: number[];
  frame: number[];
  total: number[];
  longtasks: number[];
  /** Long animation frames (> 50 ms, task + rendering), with their longest script, for attribution. */
  loaf: string[];
}

/** Installs the measurement in the page (see the header). */
async function instrument(page: Page): Promise<void> {
  await page.evaluate(() => {
    interface Store {
      applyDelta(d: unknown): boolean;
    }
    const w = window as unknown as { __semscope: { store: Store; frameStats: { totalMs: number } }; __bench: Recorder };
    const { store, frameStats } = w.__semscope;
    const rec: Recorder = { recording: false, apply: [], react: [], frame: [], total: [], longtasks: [], loaf: [] };
    w.__bench = rec;
    new PerformanceObserver((list) => {
      if (!rec.recording) return;
      for (const e of list.getEntries()) rec.longtasks.push(e.duration);
    }).observe({ type: "longtask" });
    interface Loaf extends PerformanceEntry {
      blockingDuration: number;
      renderStart: number;
      scripts: { invoker: string; sourceFunctionName: string; sourceURL: string; duration: number }[];
    }
    try {
      new PerformanceObserver((list) => {
        if (!rec.recording) return;
        for (const e of list.getEntries() as Loaf[]) {
          const top = [...e.scripts].sort((a, b) => b.duration - a.duration)[0];
          const render = e.startTime + e.duration - e.renderStart;
          const script = top !== undefined ? `${top.invoker} ${top.sourceFunctionName || "?"} ${Math.round(top.duration)} ms` : "no script";
          rec.loaf.push(`${Math.round(e.duration)} ms (rendering ${Math.round(render)} ms; longest script: ${script})`);
        }
      }).observe({ type: "long-animation-frame" });
    } catch {
      // No LoAF in this Chromium: attribution is left out.
    }
    const original = store.applyDelta.bind(store);
    let open: { apply: number; react: number; frameAt: number } | null = null;
    const close = () => {
      if (open === null) return;
      const frame = frameStats.totalMs - open.frameAt;
      if (rec.recording) {
        rec.apply.push(open.apply);
        rec.react.push(open.react);
        rec.frame.push(frame);
        rec.total.push(open.apply + open.react + frame);
      }
      open = null;
    };
    store.applyDelta = (d: unknown) => {
      close();
      const frameAt = frameStats.totalMs;
      const t0 = performance.now();
      // Its answer matters: false makes the client ask for a snapshot.
      const complete = original(d);
      const t1 = performance.now();
      const cur = { apply: t1 - t0, react: 0, frameAt };
      open = cur;
      queueMicrotask(() => {
        cur.react = performance.now() - t1;
      });
      // The frames this delta caused have run by two frames later (unless the next delta closed it first).
      requestAnimationFrame(() => requestAnimationFrame(() => open === cur && close()));
      return complete;
    };
  });
}

const setRecording = (page: Page, on: boolean) =>
  page.evaluate((v) => {
    (window as unknown as { __bench: { recording: boolean } }).__bench.recording = v;
  }, on);

const takeRecords = (page: Page): Promise<Recorder> =>
  page.evaluate(() => {
    const w = window as unknown as { __bench: Recorder };
    const out = { ...w.__bench };
    Object.assign(w.__bench, { apply: [], react: [], frame: [], total: [], longtasks: [], loaf: [] });
    return out;
  });

/** Opens the detail view by hash and times its first chart drawn (and all four). */
async function openDetail(page: Page, windowId: string): Promise<{ first: number; all: number }> {
  const hash = `#/s/${encodeURIComponent(DETAIL_KEY)}?w=${windowId}`;
  const r = await page.evaluate(
    (h) =>
      new Promise<{ first: number; all: number }>((resolve, reject) => {
        const t0 = performance.now();
        let first = -1;
        const after = (fn: () => void) => {
          const ch = new MessageChannel();
          ch.port1.onmessage = fn;
          ch.port2.postMessage(0);
        };
        const timer = setTimeout(() => reject(new Error("detail charts not drawn in 10 s")), 10_000);
        let allSeen = false;
        const mo = new MutationObserver(() => {
          const n = document.querySelectorAll(".chart-card .uplot").length;
          if (n >= 1 && first < 0) {
            first = 0;
            after(() => (first = performance.now() - t0));
          }
          if (n >= 4 && !allSeen) {
            allSeen = true;
            mo.disconnect();
            after(() => {
              clearTimeout(timer);
              resolve({ first, all: performance.now() - t0 });
            });
          }
        });
        mo.observe(document.body, { childList: true, subtree: true });
        location.hash = h;
      }),
    hash,
  );
  return r;
}

async function backToOverview(page: Page): Promise<void> {
  await page.evaluate(() => (location.hash = "#/"));
  await page.getByTestId("overview").waitFor();
  await sleep(1500);
}

function pct(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}
const median = (xs: number[]) => pct(xs, 50);
const r2 = (x: number) => Math.round(x * 100) / 100;

async function main(): Promise<void> {
  console.log(`bench:ui — ${SEMAPHORES} semaphores at 1 Hz, overview ${OVERVIEW_S} s, detail ${DETAIL_S} s${QUICK ? " (BENCH_QUICK)" : ""}`);
  const built = await buildRenderer();
  const hub = await createHub({ port: 0, staticDir: built.dir, log: () => undefined });
  // An hour of history for the detail view, ending just before the live feed begins.
  const now = Date.now();
  for (let s = 0; s < HISTORY_S; s++) hub.history.push(DETAIL_KEY, sampleOf("sem-0", 4, s - HISTORY_S, 0), now - (HISTORY_S - s) * 1000, 1000);
  const feeder = spawnAgent(join(import.meta.dirname, "feeder.ts"), [hub.url, String(AGENTS), String(PER_AGENT)]);
  const browser = await launchBrowser();
  const page = browser.page;
  try {
    await feeder.waitFor("ready", 30_000);
    await page.goto(hub.url);
    await page.getByTestId("overview").waitFor();
    await until(
      `${SEMAPHORES} semaphores in the page`,
      () => page.evaluate(() => (window as unknown as { __semscope: { store: { semaphoreCount: number } } }).__semscope.store.semaphoreCount),
      (n) => n === SEMAPHORES,
      20_000,
    );
    await instrument(page);
    await sleep(3000); // warm-up: every row drawn once, the JIT warm

    // Overview.
    await setRecording(page, true);
    await sleep(OVERVIEW_S * 1000);
    await setRecording(page, false);
    const overview = await takeRecords(page);

    // Detail first render, 1 h (60 one-minute points of the hour) and 15 m (900 one-second points).
    // Recorded: each open and the 800 ms after it; not recorded: the way back to the overview
    // (its remount is reported on its own line, outside the JSON).
    const firsts: Record<string, { first: number; all: number }[]> = { "1h": [], "15m": [] };
    const remount: number[] = [];
    const remountLoaf: string[] = [];
    const opening: Recorder = { recording: false, apply: [], react: [], frame: [], total: [], longtasks: [], loaf: [] };
    for (const w of ["1h", "15m"] as const) {
      for (let i = 0; i < (w === "1h" ? 5 : 3); i++) {
        await setRecording(page, true);
        firsts[w].push(await openDetail(page, w));
        await sleep(800);
        await setRecording(page, false);
        const o = await takeRecords(page);
        opening.longtasks.push(...o.longtasks);
        opening.loaf.push(...o.loaf);
        await setRecording(page, true);
        await backToOverview(page);
        await setRecording(page, false);
        const b = await takeRecords(page);
        remount.push(...b.longtasks);
        remountLoaf.push(...b.loaf);
      }
    }

    // Detail, live, 1 h window.
    await openDetail(page, "1h");
    await sleep(1500);
    await setRecording(page, true);
    await sleep(DETAIL_S * 1000);
    await setRecording(page, false);
    const detail = await takeRecords(page);

    const rows: [string, string][] = [];
    const dist = (name: string, xs: number[]) => rows.push([name, `p50 ${r2(median(xs))}  p95 ${r2(pct(xs, 95))}  max ${r2(pct(xs, 100))}  (n=${xs.length})`]);
    dist("overview update total ms", overview.total);
    dist("  apply (store.applyDelta)", overview.apply);
    dist("  React re-render", overview.react);
    dist("  frame pass (canvases)", overview.frame);
    rows.push(["overview long tasks >50 ms", `${overview.longtasks.length}${overview.longtasks.length > 0 ? ` (${overview.longtasks.map((d) => r2(d)).join(", ")} ms)` : ""}`]);
    dist("detail 1h update total ms", detail.total);
    dist("  apply", detail.apply);
    dist("  React re-render", detail.react);
    dist("  frame pass (4 charts)", detail.frame);
    rows.push(["detail long tasks >50 ms", `${detail.longtasks.length}${detail.longtasks.length > 0 ? ` (${detail.longtasks.map((d) => r2(d)).join(", ")} ms)` : ""}`]);
    for (const w of ["1h", "15m"] as const) {
      const f = firsts[w].map((x) => x.first);
      const a = firsts[w].map((x) => x.all);
      rows.push([`detail ${w} first chart drawn ms`, `median ${r2(median(f))}  runs ${f.map(r2).join(", ")}`]);
      rows.push([`detail ${w} all 4 charts drawn ms`, `median ${r2(median(a))}  runs ${a.map(r2).join(", ")}`]);
    }
    rows.push(["long tasks while opening detail", `${opening.longtasks.length}${opening.longtasks.length > 0 ? ` (${opening.longtasks.map((d) => r2(d)).join(", ")} ms)` : ""}`]);
    rows.push(["(not in JSON) back to overview", `${remount.length} long tasks${remount.length > 0 ? ` (${remount.map((d) => r2(d)).join(", ")} ms)` : ""}`]);

    const longTasks = overview.longtasks.length + detail.longtasks.length + opening.longtasks.length;
    const all = [...overview.total, ...detail.total];
    const p95 = r2(pct(all, 95));
    const p50 = r2(median(all));
    const firstRender = r2(median(firsts["1h"].map((x) => x.first)));
    const width = Math.max(...rows.map(([k]) => k.length));
    console.log("");
    for (const [k, v] of rows) console.log(`${k.padEnd(width)}  ${v}`);
    console.log("");
    console.log(`targets: no long task ${longTasks === 0 ? "MET" : `MISSED (${longTasks})`}; update p95 < 8 ms ${p95 < 8 ? "MET" : "MISSED"} (${p95}); detail first render < 50 ms ${firstRender < 50 ? "MET" : "MISSED"} (${firstRender})`);
    const attribution: [string, string[]][] = [
      ["overview", overview.loaf],
      ["opening detail", opening.loaf],
      ["detail live", detail.loaf],
      ["back to overview", remountLoaf],
    ];
    console.log("long animation frames > 50 ms (longest 3 per phase):");
    for (const [phase, list] of attribution) {
      const top = [...list].sort((a, b) => parseFloat(b) - parseFloat(a)).slice(0, 3);
      console.log(`  ${phase}: ${list.length}${top.length > 0 ? `; ${top.join(" | ")}` : ""}`);
    }
    if (browser.errors.length > 0) console.log(`page errors: ${browser.errors.join(" | ")}`);
    console.log(JSON.stringify({ bench: "ui", semaphores: SEMAPHORES, long_tasks: longTasks, update_p95_ms: p95, update_p50_ms: p50, detail_first_render_ms: firstRender }));
  } finally {
    await feeder.kill("SIGTERM");
    await browser.close();
    await hub.close();
    built.remove();
  }
}

await main();
