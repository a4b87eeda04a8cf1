// The dashboard end to end: the renderer built with vite, served by a real hub (web mode,
// createHub({ staticDir })), fed by raw socket.io agents speaking docs/protocol.md, opened in a real
// Chromium. The fleet below backfills four minutes of history (so the charts have a shape) and
// then streams at 1 Hz: a healthy pool, a convoy behind a slowing downstream, a leak with its
// acquisition stack, and replicas whose caps exceed their fleet budget. The screenshots it takes
// are the README's (docs/overview.png, docs/detail.png).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { io, type Socket } from "socket.io-client";
import { build } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DenseHist, type Summary } from "../../shared/histogram.js";
import type { Hello, Sample, SemaphoreInfo } from "../../shared/protocol/types.js";
import { createHub, type Hub } from "../../main/hub/index.js";
import { mulberry32 } from "../../scripts/support/prng.js";

const ROOT = resolve(import.meta.dirname, "../..");
const DIST = join(ROOT, "renderer/dist");
const DOCS = join(ROOT, "docs");
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const BACKFILL_S = 240;
/** expect.poll gives up after 1 s by default: too short for a browser on a busy CI machine. */
const POLL = { timeout: 15_000 } as const;

// ---- a deterministic fleet ----

/** `count` durations around `median` ms (log-normal, spread `sigma`), as a wire Summary. */
function summary(rand: () => number, count: number, median: number, sigma: number): Summary {
  const h = new DenseHist();
  const draws = Math.min(count, 60);
  for (let i = 0; i < draws; i++) {
    const z = Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
    h.record(Math.max(0.001, median * Math.exp(sigma * z)), count / draws);
  }
  return h.summary();
}

type Shape = (i: number, rand: () => number) => { inUse: number; leaked?: number; waiters: number; holdMs: number; waitMs: number; timeouts?: number; oldestWaitMs?: number; longestHoldMs?: number };

interface Spec {
  info: SemaphoreInfo;
  shape: Shape;
}

function sem(id: string, kind: string, cap: number, shape: Shape, extra: Partial<SemaphoreInfo> = {}): Spec {
  return {
    info: { id, name: id, kind, cap, queue: "fifo", maxWaiters: null, acquireTimeoutMs: 2000, leaseTimeoutMs: null, leakThresholdMs: 30_000, scope: "process", ...extra },
    shape,
  };
}

const wave = (i: number, period: number, phase = 0): number => Math.sin((2 * Math.PI * i) / period + phase);

const healthy = (cap: number, level: number, hold: number, phase = 0): Shape => (i, r) => ({
  inUse: Math.max(0, Math.min(cap, Math.round(cap * level * (1 + 0.35 * wave(i, 90, phase)) + 2 * (r() - 0.5)))),
  waiters: 0,
  holdMs: hold * (1 + 0.15 * wave(i, 45, phase)),
  waitMs: 0.02,
});

/** A downstream that slows over the window: holds grow, the pool saturates, a queue forms (a convoy). */
const slowing = (cap: number): Shape => (i, r) => {
  const slow = Math.min(1, Math.max(0, (i - 90) / 120));
  const hold = 60 + 260 * slow + 20 * r();
  const saturated = slow > 0.15;
  const waiters = saturated ? Math.round(3 + 9 * slow + 3 * wave(i, 20) + 2 * r()) : 0;
  return {
    inUse: saturated ? cap : Math.round(cap * (0.55 + 0.2 * wave(i, 40)) + r()),
    waiters: Math.max(0, waiters),
    holdMs: hold,
    waitMs: saturated ? hold * (1 + waiters / 5) : 0.05,
    oldestWaitMs: saturated ? hold * (2 + waiters / 2) : 0,
    timeouts: saturated && slow > 0.7 ? Math.round(r() * 3) : 0,
  };
};

/** Two permits taken and never given back (a leak), on top of normal traffic. */
const leaking = (cap: number): Shape => (i, r) => ({
  inUse: Math.min(cap, 2 + Math.round(cap * 0.35 * (1 + 0.3 * wave(i, 60)) + r())),
  leaked: 2,
  waiters: 0,
  holdMs: 35 + 8 * r(),
  waitMs: 0.03,
  longestHoldMs: 60_000 + i * 1000,
});

interface AgentSpec {
  hello: Hello;
  sems: Spec[];
}

function agent(service: string, instance: string, sems: Spec[]): AgentSpec {
  return {
    hello: { agentId: `${service}-${instance}`, service, instance, pid: 4000 + instance.length, host: `${instance}.prod`, runtime: "node 20.19", agentVersion: "0.1.0", startedAt: Date.now() - 3_600_000 },
    sems,
  };
}

const upstream = (phase: number) => sem("upstream", "p-limit", 16, healthy(16, 0.62, 48, phase), { budget: 40 });

const FLEET: AgentSpec[] = [
  agent("checkout", "web-1", [
    sem("db", "pg-pool", 20, healthy(20, 0.5, 24)),
    sem("payments", "semaphore", 8, slowing(8)),
    sem("cache", "redis-semaphore", 50, healthy(50, 0.2, 3, 1)),
  ]),
  agent("checkout", "web-2", [sem("db", "pg-pool", 20, healthy(20, 0.45, 26, 2)), sem("payments", "semaphore", 8, healthy(8, 0.5, 60, 2)), sem("cache", "redis-semaphore", 50, healthy(50, 0.18, 3, 3))]),
  agent("inventory", "inv-1", [sem("stock-lock", "async-mutex", 1, healthy(1, 0.4, 4)), sem("http", "generic-pool", 10, leaking(10))]),
  agent("search", "search-1", [upstream(0)]),
  agent("search", "search-2", [upstream(1)]),
  agent("search", "search-3", [upstream(2)]),
];

const LEAK_STACK = [
  "Error: permit acquired",
  "    at Semaphore.acquire (/srv/inventory/node_modules/semscope-agent/dist/semaphore.js:118:19)",
  "    at reserveStock (/srv/inventory/src/stock/reserve.ts:42:27)",
  "    at async handleOrder (/srv/inventory/src/routes/orders.ts:88:5)",
  "    at async Server.<anonymous> (/srv/inventory/src/server.ts:31:7)",
].join("\n");

class RawAgent {
  private socket: Socket | null = null;
  private seq = 0;
  private i = 0;
  private readonly rand: () => number;

  constructor(
    private readonly url: string,
    readonly spec: AgentSpec,
  ) {
    this.rand = mulberry32(spec.hello.agentId.length * 7919 + spec.sems.length);
  }

  private emit(event: string, payload: unknown): Promise<{ ok: boolean; error?: string }> {
    if (this.socket === null) throw new Error("not connected");
    return this.socket.timeout(5000).emitWithAck(event, payload) as Promise<{ ok: boolean; error?: string }>;
  }

  async start(): Promise<void> {
    this.socket = io(`${this.url}/agent`, { transports: ["websocket"], auth: { protocol: 1 }, forceNew: true, reconnection: false });
    await new Promise<void>((res, rej) => {
      this.socket?.once("connect", () => res());
      this.socket?.once("connect_error", rej);
    });
    expect(await this.emit("hello", this.spec.hello)).toMatchObject({ ok: true });
    expect(await this.emit("register", { semaphores: this.spec.sems.map((s) => s.info) })).toMatchObject({ ok: true });
  }

  sample(t: number): Promise<{ ok: boolean; error?: string }> {
    const i = this.i++;
    const items: Sample[] = this.spec.sems.map(({ info, shape }) => {
      const s = shape(i, this.rand);
      // Little's law: what cycles is what is in use, less what is stuck.
      const released = Math.round((s.inUse - (s.leaked ?? 0)) / (s.holdMs / 1000));
      const timeouts = s.timeouts ?? 0;
      return {
        id: info.id,
        cap: info.cap,
        inUse: s.inUse,
        available: info.cap - s.inUse,
        waiters: s.waiters,
        oldestWaitMs: s.oldestWaitMs ?? 0,
        acquired: released + (s.waiters > 0 ? 1 : 0),
        released,
        timeouts,
        rejections: 0,
        aborts: 0,
        doubleReleases: 0,
        leaseExpiries: 0,
        waitMs: summary(this.rand, released, s.waitMs, 0.6),
        holdMs: summary(this.rand, released, s.holdMs, 0.5),
        longestHoldMs: s.longestHoldMs ?? s.holdMs * 3,
      };
    });
    return this.emit("samples", { seq: this.seq++, t, intervalMs: 1000, items });
  }

  events(items: unknown[]): Promise<{ ok: boolean; error?: string }> {
    return this.emit("events", { items });
  }

  stop(): void {
    this.socket?.disconnect();
  }
}

// ---- the test ----

describe("dashboard (vite build, web-mode hub, Chromium)", () => {
  let hub: Hub;
  let browser: BrowserContext;
  let page: Page;
  let agents: RawAgent[] = [];
  let ticker: ReturnType<typeof setInterval> | undefined;
  let profile: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium fonts-liberation, or set CHROMIUM_PATH`);
    // Vitest sets NODE_ENV=test, which would give React's development build.
    const nodeEnv = process.env.NODE_ENV;
    process.env.NODE_ENV = "production";
    try {
      await build({ configFile: join(ROOT, "renderer/vite.config.ts"), logLevel: "warn", mode: "production" });
    } finally {
      process.env.NODE_ENV = nodeEnv;
    }
    expect(existsSync(join(DIST, "index.html"))).toBe(true);
    hub = await createHub({ port: 0, staticDir: DIST, log: () => undefined });

    const now = Date.now();
    const start = now - BACKFILL_S * 1000;
    agents = FLEET.map((spec) => new RawAgent(hub.url, spec));
    await Promise.all(agents.map((a) => a.start()));
    await Promise.all(
      agents.map(async (a) => {
        for (let s = 0; s < BACKFILL_S; s++) expect(await a.sample(start + s * 1000)).toMatchObject({ ok: true });
      }),
    );
    const inventory = agents.find((a) => a.spec.hello.service === "inventory");
    await inventory?.events([
      { t: now - 70_000, id: "http", type: "leak_suspected", holderId: "order-7731", heldMs: 30_000, stack: LEAK_STACK },
      { t: now - 40_000, id: "http", type: "leak_suspected", holderId: "order-7790", heldMs: 30_000, stack: LEAK_STACK.replace(":42:27", ":57:11") },
    ]);
    let t = now;
    ticker = setInterval(() => {
      t += 1000;
      for (const a of agents) void a.sample(t).catch(() => undefined);
    }, 1000);

    profile = mkdtempSync(join(tmpdir(), "semscope-chromium-"));
    // A fresh --user-data-dir per run (playwright passes it for a persistent context).
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
      viewport: { width: 1440, height: 900 },
      colorScheme: "light",
      acceptDownloads: true,
    });
    page = browser.pages()[0] ?? (await browser.newPage());
    page.on("pageerror", (err) => pageErrors.push(err.message));
    page.on("console", (msg) => {
      if (msg.type() === "error") pageErrors.push(msg.text());
    });
  }, 90_000);

  afterAll(async () => {
    if (ticker !== undefined) clearInterval(ticker);
    for (const a of agents) a.stop();
    await browser?.close();
    await hub?.close();
    if (profile !== undefined) rmSync(profile, { recursive: true, force: true });
  });

  it("lists every semaphore with its status, opens one, and draws its charts", async () => {
    mkdirSync(DOCS, { recursive: true });
    await page.goto(hub.url);
    await page.getByTestId("overview").waitFor();
    await expect.poll(() => page.getByTestId("connection-state").textContent(), POLL).toBe("Live");

    // The overview lists the semaphores with the hub's statuses: the leak, the convoy.
    const leakRow = page.locator('[data-key="inventory/inv-1/http"]');
    await leakRow.waitFor();
    await expect.poll(() => leakRow.getAttribute("data-status"), POLL).toBe("leak");
    expect(await leakRow.locator(".badge").textContent()).toBe("Leak");
    await expect.poll(() => page.locator('[data-key="checkout/web-1/payments"]').getAttribute("data-status"), POLL).toBe("convoy");
    expect(await page.locator('[data-key="checkout/web-1/db"]').getAttribute("data-status")).toBe("ok");
    expect(await page.locator(".sem-row").count()).toBe(11);
    // Sparklines drawn (a canvas with pixels on it) in the animation-frame pass.
    await expect
      .poll(() => page.locator('[data-key="checkout/web-1/db"] canvas.spark').evaluate((c: HTMLCanvasElement) => c.toDataURL().length), POLL)
      .toBeGreaterThan(1000);

    // Filtering narrows the list; "/" focuses the filter.
    await page.keyboard.press("/");
    expect(await page.evaluate(() => document.activeElement?.getAttribute("data-testid"))).toBe("filter");
    await page.keyboard.type("is:leak");
    await expect.poll(() => page.locator(".sem-row").count(), POLL).toBe(1);
    expect(await page.locator(".sem-row").getAttribute("data-key")).toBe("inventory/inv-1/http");
    await page.keyboard.press("Escape");
    await page.getByTestId("filter").fill("");
    await page.getByTestId("filter").blur();
    await page.waitForTimeout(1200);
    await page.screenshot({ path: join(DOCS, "overview.png") });

    // Keyboard: j moves the selection down the list, Enter opens it.
    await page.locator('[data-key="checkout/web-1/payments"]').hover();
    for (let i = 0; i < 3; i++) await page.keyboard.press("j");
    expect(await page.locator(".grid-row.selected").getAttribute("data-key")).toBe("inventory/inv-1/http");
    await page.keyboard.press("Enter");
    await page.getByTestId("detail").waitFor();
    expect(decodeURIComponent(new URL(page.url()).hash)).toBe("#/s/inventory/inv-1/http");
    // The leak alert's evidence brings the acquisition stack of a suspected holder.
    expect(await page.getByTestId("leak-stack").first().textContent()).toContain("reserveStock");
    // Its configuration, as the agent registered it (carried by the hub's /ui entries).
    const config = page.getByTestId("config");
    expect(await config.getByTestId("config-queue").textContent()).toBe("fifo");
    expect(await config.getByTestId("config-max-waiters").textContent()).toBe("unbounded");
    expect(await config.getByTestId("config-acquire-timeout").textContent()).toBe("2 s");
    expect(await config.getByTestId("config-lease-timeout").textContent()).toBe("none");
    expect(await config.getByTestId("config-leak-threshold").textContent()).toBe("30 s");
    expect(await config.getByTestId("config-scope").textContent()).toBe("per process");
    expect(await config.textContent()).toContain("generic-pool");
    // The leak's cap (10) on its chart, for the next view to differ from.
    await expect.poll(() => page.locator('[data-chart="permits"] .u-series').nth(2).locator(".u-value").textContent(), POLL).toBe("10");
    await page.keyboard.press("Escape");
    await page.getByTestId("overview").waitFor();
    // Back on the list, every row has its sparkline again (one canvas each, reused), drawn.
    await expect.poll(() => page.locator(".sem-row canvas.spark").count(), POLL).toBe(11);
    expect(await page.locator('[data-key="checkout/web-1/db"] canvas').count()).toBe(1);
    await expect
      .poll(() => page.locator('[data-key="checkout/web-1/db"] canvas.spark').evaluate((c: HTMLCanvasElement) => c.toDataURL().length), POLL)
      .toBeGreaterThan(1000);

    // Open the convoy's detail, see live charts.
    await page.locator('[data-key="checkout/web-1/payments"]').click();
    await page.getByTestId("detail").waitFor();
    await expect.poll(() => page.locator(".chart-card canvas").count(), POLL).toBeGreaterThanOrEqual(4);
    await expect.poll(() => page.getByTestId("live-state").textContent(), POLL).toContain("Live");
    // History loaded into the charts: the legend reads the latest point, this semaphore's (its
    // cap is 8; the chart the last view showed is shown again here, with this view's data).
    await expect.poll(() => page.locator('[data-chart="permits"] .u-series').nth(1).locator(".u-value").textContent(), POLL).not.toBe("—");
    await expect.poll(() => page.locator('[data-chart="permits"] .u-series').nth(2).locator(".u-value").textContent(), POLL).toBe("8");
    expect(await page.locator('[data-chart="permits"] canvas').count()).toBe(1);
    await expect.poll(() => page.getByTestId("littles").textContent(), POLL).toMatch(/downstream|too tight|Saturated/i);
    expect(await page.getByTestId("config-budget").textContent()).toBe("none declared");
    await page.waitForTimeout(1500);
    await page.screenshot({ path: join(DOCS, "detail.png") });

    // Exports: the chart as PNG (canvas.toBlob), its data as CSV.
    const png = page.waitForEvent("download");
    await page.getByTestId("png-permits").click();
    const pngFile = await (await png).path();
    expect(readFileSync(pngFile).subarray(1, 4).toString()).toBe("PNG");
    const csv = page.waitForEvent("download");
    await page.getByTestId("csv-permits").click();
    const csvFile = await csv;
    expect(csvFile.suggestedFilename()).toMatch(/^checkout-web-1-payments-permits-in-use-\d{8}-\d{6}\.csv$/);
    const rows = readFileSync(await csvFile.path(), "utf8").trim().split("\r\n");
    expect(rows[0]).toBe("time,t_ms,in use,cap N");
    expect(rows.length).toBeGreaterThan(200);

    // Esc goes back to the list.
    await page.keyboard.press("Escape");
    await page.getByTestId("overview").waitFor();
    expect(pageErrors).toEqual([]);
  }, 90_000);
});
