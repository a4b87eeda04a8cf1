// The /metrics case: a hub holding 10,000 semaphores (its design scale), scraped. First single
// scrapes, plain then gzip'd, each after the hub's share window so each renders afresh: how long a
// scraper waits for the whole body, its bytes on the wire, and the longest the hub's event loop was
// held meanwhile. Then a siege: four scrapers back to back while an honest agent sends a batch
// every 100 ms: its ack latencies and the loop's longest block, in turn with windows of the agent
// alone (the machine's own noise) and of four gzip scrapers (as Prometheus asks), BENCH_SCRAPE_ROUNDS times. The scrapers run niced: on a shared machine a Prometheus server
// elsewhere is what they stand for, not a competitor for the hub's cores.
// Alone: `node --import tsx bench/hub/metrics-scrape.ts` (BENCH_SCRAPE_SEMAPHORES, BENCH_SCRAPE_MS,
// BENCH_SCRAPE_ROUNDS).
import { loadavg } from "node:os";
import { io, type Socket } from "socket.io-client";
import { HUB_NODE_FLAGS } from "../../main/hub/node-flags.js";
import { HISTORY_FULL_BYTES } from "../../shared/history/index.js";
import { spawnChild, type Child } from "./child.js";
import { percentile } from "./report.js";
import { wireGet, type WireScrape } from "./wire-get.js";
import { hello, infos, SemaphoreModel } from "./workload.js";

type ScraperMsg = { type: "ready" } | { type: "done"; times: number[]; bytes: number[] };
type Encoding = "identity" | "gzip";
/** The loop's longest gap (a 5 ms timer's), with the main thread's CPU time and run-queue wait in it; and the most CPU in any one gap. */
interface Gaps {
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly waitMs: number;
  readonly maxCpuMs: number;
}
type Msg = { type: "listening"; url: string } | { type: "loop"; maxMs: number; p99Ms: number; gcMaxMs: number; gcMinorMaxMs: number; gaps: Gaps; rss: number };

/** Single scrapes in one encoding, each rendering afresh. */
interface Singles {
  /** Bytes on the wire of the first. */
  readonly bytes: number;
  /** Whole-body times, ms, sorted. */
  readonly ms: number[];
  readonly loopMaxMs: number;
  readonly gcMaxMs: number;
  readonly gaps: Gaps;
}

export interface MetricsScrapeResult {
  readonly semaphores: number;
  readonly plain: Singles;
  readonly gzip: Singles;
  /** The honest agent alone, then with plain scrapers, then gzip ones, a window of each per round. */
  readonly quiet: Window[];
  readonly siege: Window[];
  readonly gzipSiege: Window[];
  /** One-minute load averages at the start and the end. */
  readonly load: [number, number];
}

interface Honest {
  readonly socket: Socket;
  readonly models: SemaphoreModel[];
  seq: number;
}

interface Window {
  readonly scrapes: number;
  /** Bytes on the wire, all scrapes together. */
  readonly wireBytes: number;
  /** Ack latencies, ms, sorted. */
  readonly acks: number[];
  readonly lost: number;
  readonly loopMaxMs: number;
  readonly loopP99Ms: number;
  readonly gcMaxMs: number;
  /** The longest young-generation GC (scavenge); the rest of gcMaxMs is full collections. */
  readonly gcMinorMaxMs: number;
  readonly gaps: Gaps;
  readonly rssMb: number;
}

/** The load's address; the honest agent comes from 127.0.0.1. */
const FROM = "127.0.0.2";
const PER_AGENT = 1000;
const SCRAPERS = 4;
/** The scrapers' nice level. */
const SCRAPER_NICE = 10;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function connect(url: string, from?: string): Promise<Socket> {
  // engine.io-client hands localAddress to ws in Node; its types leave it out.
  const s = io(`${url}/agent`, { forceNew: true, reconnection: false, transports: ["websocket"], auth: { protocol: 1 }, ...(from !== undefined ? ({ localAddress: from } as object) : {}) });
  await new Promise<void>((resolve, reject) => {
    s.once("connect", () => resolve());
    s.once("connect_error", reject);
  });
  return s;
}

async function ask(s: Socket, event: string, payload: unknown): Promise<void> {
  const ack = (await s.timeout(120_000).emitWithAck(event, payload)) as { ok: boolean; error?: string };
  if (!ack.ok) throw new Error(`${event} refused: ${ack.error ?? "?"}`);
}

/** Agents from FROM holding `semaphores` semaphores, three batches of samples each, left connected. */
async function load(url: string, semaphores: number): Promise<Socket[]> {
  const sockets: Socket[] = [];
  for (let a = 0; a * PER_AGENT < semaphores; a++) {
    const s = await connect(url, FROM);
    sockets.push(s);
    const list = infos(Math.min(PER_AGENT, semaphores - a * PER_AGENT));
    const models = list.map((info, i) => new SemaphoreModel(info, a * PER_AGENT + i));
    await ask(s, "hello", hello(`scrape-load-${a}`, a));
    await ask(s, "register", { semaphores: list });
    for (let seq = 0; seq < 3; seq++) await ask(s, "samples", { seq, t: Date.now(), intervalMs: 1000, items: models.map((m) => m.sample()) });
  }
  return sockets;
}

/** Five single scrapes asking for `encoding`, each past the hub's share window so each renders afresh. */
async function singles(hub: Child<Msg>, url: string, encoding: Encoding): Promise<Singles> {
  await sleep(1500);
  hub.send("mark");
  const got: WireScrape[] = [];
  for (let i = 0; i < 5; i++) {
    const s = await wireGet(`${url}/metrics`, encoding);
    if ((s.encoding ?? "identity") !== encoding) throw new Error(`/metrics: asked for ${encoding}, got ${s.encoding ?? "identity"}`);
    got.push(s);
    await sleep(1500);
  }
  hub.send("loop");
  const loop = await hub.next("loop", 60_000);
  return { bytes: got[0].bytes, ms: got.map((s) => s.ms).sort((a, b) => a - b), loopMaxMs: loop.maxMs, gcMaxMs: loop.gcMaxMs, gaps: loop.gaps };
}

/**
 * `ms` of the honest agent sending a batch every 100 ms while `scrapers` scrape back to back:
 * its ack latencies, and the hub's event loop over the window.
 */
async function honestWindow(hub: Child<Msg>, honest: Honest, ms: number, scrapers: number, url: string, encoding: Encoding = "identity"): Promise<Window> {
  const scraping = scrapers === 0 ? undefined : spawnChild<ScraperMsg>("./scrapers.ts", { BENCH_URL: url, BENCH_SCRAPERS: String(scrapers), BENCH_ACCEPT_ENCODING: encoding }, [], SCRAPER_NICE);
  if (scraping !== undefined) await scraping.next("ready", 60_000);
  hub.send("mark");
  scraping?.send("go");
  const acks: number[] = [];
  let lost = 0;
  const until = Date.now() + ms;
  const sends: Promise<void>[] = [];
  const agentLoop = (async () => {
    while (Date.now() < until) {
      const t0 = performance.now();
      sends.push(
        honest.socket
          .timeout(60_000)
          .emitWithAck("samples", { seq: honest.seq++, t: Date.now(), intervalMs: 100, items: honest.models.map((m) => m.sample()) })
          .then((a: { ok: boolean }) => void (a.ok ? acks.push(performance.now() - t0) : lost++))
          .catch(() => void lost++),
      );
      await sleep(100);
    }
  })();
  await agentLoop;
  let scrapes = 0;
  let wireBytes = 0;
  if (scraping !== undefined) {
    scraping.send("stop");
    const done = await scraping.next("done", 120_000);
    scrapes = done.times.length;
    wireBytes = done.bytes.reduce((a, b) => a + b, 0);
    await scraping.stop();
  }
  await Promise.all(sends);
  hub.send("loop");
  const loop = await hub.next("loop", 60_000);
  acks.sort((a, b) => a - b);
  return { scrapes, wireBytes, acks, lost, loopMaxMs: loop.maxMs, loopP99Ms: loop.p99Ms, gcMaxMs: loop.gcMaxMs, gcMinorMaxMs: loop.gcMinorMaxMs, gaps: loop.gaps, rssMb: loop.rss / 2 ** 20 };
}
export async function metricsScrape(
  log: (line: string) => void,
  semaphores = Number(process.env.BENCH_SCRAPE_SEMAPHORES ?? 10_000),
  siegeMs = Number(process.env.BENCH_SCRAPE_MS ?? 10_000),
  rounds = Number(process.env.BENCH_SCRAPE_ROUNDS ?? 3),
): Promise<MetricsScrapeResult> {
  const load0 = loadavg()[0];
  const room = semaphores + 100;
  const options = { maxHistories: room, maxHistoryBytes: room * HISTORY_FULL_BYTES, agentAddressBudget: { itemsPerSecond: 10_000_000, burst: 10_000_000 }, admission: { maxSemaphoresPerAddress: room, maxSemaphores: 2 * room } };
  // BENCH_SERVER_NODE_ARGS: more node flags for the hub child (e.g. "--trace-gc"), as in run.ts.
  const extra = (process.env.BENCH_SERVER_NODE_ARGS ?? "").split(" ").filter((a) => a !== "");
  const hub: Child<Msg> = spawnChild<Msg>("./scrape-hub.ts", { BENCH_HUB_OPTIONS: JSON.stringify(options) }, [...HUB_NODE_FLAGS, ...extra]);
  const { url } = await hub.next("listening", 60_000);
  const sockets = await load(url, semaphores);
  log(`  /metrics: ${semaphores} semaphores loaded; single scrapes, plain then gzip'd`);

  await wireGet(`${url}/metrics`, "identity");
  const plain = await singles(hub, url, "identity");
  const gzip = await singles(hub, url, "gzip");

  log(`  /metrics: an honest agent sending every 100 ms, ${siegeMs / 1000} s alone, then ${siegeMs / 1000} s with ${SCRAPERS} scrapers, then with ${SCRAPERS} gzip scrapers, ${rounds} times`);
  const socket = await connect(url);
  sockets.push(socket);
  const honestList = infos(10);
  const honest: Honest = { socket, models: honestList.map((info, i) => new SemaphoreModel(info, 1_000_000 + i)), seq: 0 };
  await ask(socket, "hello", hello("scrape-honest", 1));
  await ask(socket, "register", { semaphores: honestList });
  const quiet: Window[] = [];
  const siege: Window[] = [];
  const gzipSiege: Window[] = [];
  for (let round = 0; round < rounds; round++) {
    quiet.push(await honestWindow(hub, honest, siegeMs, 0, url));
    siege.push(await honestWindow(hub, honest, siegeMs, SCRAPERS, url));
    gzipSiege.push(await honestWindow(hub, honest, siegeMs, SCRAPERS, url, "gzip"));
  }
  for (const s of sockets) s.disconnect();
  await hub.stop();
  return {
    semaphores,
    plain,
    gzip,
    quiet,
    siege,
    gzipSiege,
    load: [load0, loadavg()[0]],
  };
}

const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : "-");
const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
const scrapes = (ws: Window[]) => ws.reduce((n, w) => n + w.scrapes, 0);
/** Bytes on the wire a scrape, when the windows had scrapers. */
const wire = (ws: Window[]) => (scrapes(ws) === 0 ? "" : ` of ${mb(ws.reduce((n, w) => n + w.wireBytes, 0) / scrapes(ws))} MB on the wire`);

function gapLine(gs: Gaps[]): string {
  return `longest gap ${gs.map((g) => `${ms(g.wallMs)} (CPU ${ms(g.cpuMs)}, waiting for a core ${ms(g.waitMs)})`).join(", ")} ms; most CPU in one gap ${gs.map((g) => ms(g.maxCpuMs)).join(", ")} ms`;
}

export function metricsScrapeLines(r: MetricsScrapeResult): string[] {
  const each = (ws: Window[], f: (w: Window) => number) => ws.map((w) => ms(f(w))).join(", ");
  const row = (label: string, ws: Window[]) => {
    const acks = ws.flatMap((w) => w.acks).sort((a, b) => a - b);
    const lost = ws.reduce((n, w) => n + w.lost, 0);
    return [
      `  ${label}: ${scrapes(ws)} scrapes${wire(ws)}; honest agent ${acks.length} acks (${lost} lost), p50 ${ms(percentile(acks, 50))} / p99 ${ms(percentile(acks, 99))} / max ${ms(acks.at(-1) ?? Number.NaN)} ms (p99 per window ${each(ws, (w) => percentile(w.acks, 99))})`,
      `    loop block max per window ${each(ws, (w) => w.loopMaxMs)} ms (p99 ${each(ws, (w) => w.loopP99Ms)}); longest GC pause ${each(ws, (w) => w.gcMaxMs)} ms, of which scavenges ${each(ws, (w) => w.gcMinorMaxMs)}; hub rss ${each(ws, (w) => w.rssMb)} MB`,
      `    ${gapLine(ws.map((w) => w.gaps))}`,
    ];
  };
  const met = (ws: Window[]) => ws.every((w) => w.loopMaxMs <= 50) && percentile(ws.flatMap((w) => w.acks).sort((a, b) => a - b), 99) < 50;
  const pass = met(r.siege) && met(r.gzipSiege) && r.plain.loopMaxMs <= 50 && r.gzip.loopMaxMs <= 50;
  const single = (label: string, s: Singles) =>
    `  single scrapes, ${label}: ${mb(s.bytes)} MB on the wire, whole body in ${s.ms.map(ms).join(", ")} ms; longest loop block ${ms(s.loopMaxMs)} ms, GC pause ${ms(s.gcMaxMs)} ms; ${gapLine([s.gaps])}`;
  return [
    `/metrics at ${r.semaphores} semaphores: ${mb(r.plain.bytes)} MB a scrape, ${mb(r.gzip.bytes)} MB gzip'd (load average ${r.load.map((l) => l.toFixed(1)).join(" → ")})`,
    single("plain", r.plain),
    single("gzip'd", r.gzip),
    ...row(`no scraper, ${r.quiet.length} windows`, r.quiet),
    ...row(`${SCRAPERS} scrapers back to back, ${r.siege.length} windows`, r.siege),
    ...row(`${SCRAPERS} gzip scrapers back to back, ${r.gzipSiege.length} windows`, r.gzipSiege),
    `  ${pass ? "PASS" : "FAIL"} no loop block over 50 ms and ack p99 under 50 ms while scraped, plain and gzip'd`,
  ];
}

if (/metrics-scrape\.ts$/.test(process.argv[1] ?? "")) {
  const r = await metricsScrape((line) => process.stderr.write(`${line}\n`));
  process.stdout.write(`${metricsScrapeLines(r).join("\n")}\n`);
  process.exit(0);
}
