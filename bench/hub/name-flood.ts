// The name-flood case: hub memory after floods of new names, as issue 28 found them (three short
// floods from one process: agents that say hello, register 1,000 fresh semaphores, send one batch
// and leave, every one kept for hours). The same flood against the hub with its default caps and
// against the hub with the caps lifted (as it was before it had any), in one run. Beside each
// flood, a real agent (the agent library in a child, 10 semaphores at 200 ms, from 127.0.0.1)
// whose acks are timed, and the hub's longest event-loop block: quietly first (the machine's own
// noise), then over each round of the flood. A dashboard is open throughout (a /ui client taking
// every delta): each delta reads the hub while evicted agents are being forgotten. BENCH_CPU_PROF=<dir>: a CPU profile of each window,
// <dir>/<case>-<side>-<quiet|round-N>.cpuprofile.
// Alone: `node --import tsx bench/hub/name-flood.ts` (BENCH_FLOOD_ROUNDS, BENCH_FLOOD_AGENTS;
// BENCH_SERVER_NODE_ARGS: more node flags for the hub child, e.g. "--trace-gc-nvp").
import { existsSync, renameSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { io } from "socket.io-client";
import { HUB_NODE_FLAGS } from "../../main/hub/node-flags.js";
import type { HubAdmission, Sample } from "../../shared/protocol/index.js";
import { spawnChild, type Child } from "./child.js";
import { phase, type SiegeMessage, type SiegePhase } from "./ui-siege.js";

type Mem = { type: "mem"; rss: number; heapUsed: number; agents: number; semaphores: number; histories: number; admission?: HubAdmission };
type Msg = SiegeMessage | Mem;

export interface FloodSide {
  readonly label: string;
  readonly before: Mem;
  readonly after: Mem;
  /** Flood messages the hub refused (a cap). */
  readonly refused: number;
  /** The real agent alone, then over each round of the flood. */
  readonly quiet: SiegePhase;
  readonly rounds: readonly SiegePhase[];
  /** The dashboard open throughout, if the case had one. */
  readonly dashboard?: DashboardCount;
}

interface DashboardCount {
  deltas: number;
  /** Deltas missed (a seq gap: the hub dropped them for a slow dashboard). */
  gaps: number;
  connected: boolean;
}

/** A dashboard: a /ui client that takes its snapshot and counts every delta after it. */
async function openDashboard(url: string): Promise<{ count: DashboardCount; close(): void }> {
  const socket = io(`${url}/ui`, { forceNew: true, reconnection: false, transports: ["websocket"], auth: { protocol: 1 } });
  const count: DashboardCount = { deltas: 0, gaps: 0, connected: true };
  let seq = -1;
  socket.on("delta", (d: { seq: number }) => {
    if (seq >= 0 && d.seq !== seq + 1) count.gaps++;
    seq = d.seq;
    count.deltas++;
  });
  socket.on("disconnect", () => void (count.connected = false));
  await new Promise<void>((resolve, reject) => {
    socket.once("snapshot", (s: { deltaSeq: number }) => {
      seq = s.deltaSeq;
      resolve();
    });
    socket.once("connect_error", reject);
  });
  return { count, close: () => socket.disconnect() };
}

export interface NameFloodResult {
  readonly sent: number;
  readonly capped: FloodSide;
  readonly uncapped: FloodSide;
}

/** Another loopback address: the flood comes from one remote address, as one host's would. */
const FROM = "127.0.0.2";
const PER_AGENT = 1000;

function quiet(id: string): Sample {
  const s = { count: 0, p50: 0, p90: 0, p99: 0, max: 0, hist: [] };
  return { id, cap: 10, inUse: 0, available: 10, waiters: 0, oldestWaitMs: 0, acquired: 0, released: 0, timeouts: 0, rejections: 0, aborts: 0, doubleReleases: 0, leaseExpiries: 0, waitMs: s, holdMs: s, longestHoldMs: 0 };
}

/** One flood agent: hello, register `perAgent` new names, one batch, gone. Returns how many answers were refusals. */
export async function floodAgent(url: string, name: string, perAgent = PER_AGENT, from = FROM): Promise<number> {
  // engine.io-client hands localAddress to ws in Node; its types leave it out.
  const socket = io(`${url}/agent`, { forceNew: true, reconnection: false, transports: ["websocket"], auth: { protocol: 1 }, ...({ localAddress: from } as object) });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    socket.once("connect_error", reject);
  });
  const ask = (event: string, payload: unknown) => socket.timeout(60_000).emitWithAck(event, payload) as Promise<{ ok: boolean }>;
  const ids = Array.from({ length: perAgent }, (_, i) => `${name}-${i}`);
  let refused = 0;
  const hello = await ask("hello", { agentId: name, service: "flood", instance: name, pid: 1, host: "flood", runtime: "node", agentVersion: "0", startedAt: Date.now() });
  if (hello.ok) {
    const info = (id: string) => ({ id, name: id, kind: "semaphore", cap: 10, queue: "fifo", maxWaiters: null, acquireTimeoutMs: null, leaseTimeoutMs: null, leakThresholdMs: null, scope: "process" });
    if (!(await ask("register", { semaphores: ids.map(info) })).ok) refused++;
    if (!(await ask("samples", { seq: 0, t: Date.now(), intervalMs: 1000, items: ids.map(quiet) })).ok) refused++;
  } else refused++;
  socket.disconnect();
  return refused;
}

/** What one flood agent does (the `k`th of its round), returning its refusals. */
export type Flooder = (url: string, name: string, k: number) => Promise<number>;

const fixture = fileURLToPath(new URL("../../test/e2e/stream/fixtures/service.ts", import.meta.url));
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const QUIET_MS = 6000;

/**
 * A hub child with `admission`'s caps and a real agent streaming to it: its memory before and
 * after `rounds` of `agents` flooders, the agent's acks and the hub's loop alone and each round.
 */
export async function side(label: string, admission: object, rounds: number, agents: number, log: (line: string) => void, flood: Flooder = (url, name) => floodAgent(url, name), caseName = "name-flood", withDashboard = false): Promise<FloodSide> {
  const prof = process.env.BENCH_CPU_PROF;
  const profile = prof === undefined || prof === "" ? undefined : `${prof}/${caseName}-${label.replace(/\W+/g, "-")}.cpuprofile`;
  // Each window's profile is written to the one file as its report is sent: kept under its window's name.
  const keepProfile = (window: string) => profile !== undefined && existsSync(profile) && renameSync(profile, profile.replace(/\.cpuprofile$/, `-${window}.cpuprofile`));
  const profEnv: Record<string, string> = profile === undefined ? {} : { BENCH_PROFILE_FILE: profile };
  const extra = (process.env.BENCH_SERVER_NODE_ARGS ?? "").split(" ").filter((a) => a !== "");
  const hub = spawnChild<Msg>("./name-flood-hub.ts", { BENCH_ADMISSION: JSON.stringify(admission), ...profEnv }, ["--expose-gc", ...HUB_NODE_FLAGS, ...extra]);
  const children: Child<Msg>[] = [hub];
  let dashboard: Awaited<ReturnType<typeof openDashboard>> | undefined;
  try {
    const { url } = await hub.next("listening", 60_000);
    hub.send("mem");
    const before = await hub.next("mem", 60_000);
    if (withDashboard) dashboard = await openDashboard(url);
    const agent = spawnChild<Msg>(fixture, { HUB_URL: url, SERVICE: "honest", INSTANCE: "h1", INTERVAL_MS: "200", SCENARIOS: "steady:10" });
    children.push(agent);
    await agent.next("connected", 60_000);
    await sleep(2000);
    const quiet = await phase(hub as Child<SiegeMessage>, agent as Child<SiegeMessage>, () => sleep(QUIET_MS));
    keepProfile("quiet");
    let refused = 0;
    const measured: SiegePhase[] = [];
    for (let r = 0; r < rounds; r++) {
      measured.push(
        await phase(hub as Child<SiegeMessage>, agent as Child<SiegeMessage>, async () => {
          // A few at a time, as a flooding process would open them.
          for (let i = 0; i < agents; i += 4) {
            const batch = Array.from({ length: Math.min(4, agents - i) }, (_, j) => flood(url, `${label}-r${r}-a${i + j}`, i + j));
            for (const n of await Promise.all(batch)) refused += n;
          }
        }),
      );
      keepProfile(`round-${r + 1}`);
      const m = measured.at(-1)!;
      log(`  ${caseName} (${label}): round ${r + 1} of ${rounds}: ack p99 ${m.p99.toFixed(1)} ms, loop max ${m.loopMaxMs.toFixed(0)} ms`);
    }
    hub.send("mem");
    const after = await hub.next("mem", 120_000);
    return { label, before, after, refused, quiet, rounds: measured, ...(dashboard === undefined ? {} : { dashboard: { ...dashboard.count } }) };
  } finally {
    dashboard?.close();
    await Promise.all(children.map((c) => c.stop()));
  }
}

export async function nameFlood(log: (line: string) => void, rounds = Number(process.env.BENCH_FLOOD_ROUNDS ?? 3), agents = Number(process.env.BENCH_FLOOD_AGENTS ?? 20)): Promise<NameFloodResult> {
  const flood: Flooder = (url, name) => floodAgent(url, name);
  const capped = await side("default caps", {}, rounds, agents, log, flood, "name-flood", true);
  const lifted = 100_000_000;
  const uncapped = await side("caps lifted", { maxAgents: lifted, maxAgentsPerAddress: lifted, maxSemaphores: lifted, maxSemaphoresPerAddress: lifted }, rounds, agents, log, flood, "name-flood", true);
  return { sent: rounds * agents * PER_AGENT, capped, uncapped };
}

const MB = 1024 * 1024;
const f = (x: number, d: number) => (Number.isFinite(x) ? x.toFixed(d) : "n/a");
const spread = (xs: readonly number[], d: number) => `${f(Math.min(...xs), d)}–${f(Math.max(...xs), d)}`;

/** The real agent's acks and the hub's loop beside a flood: alone, then the spread over the rounds. */
export function floodPhaseLines(s: FloodSide): string[] {
  const row = (name: string, p: SiegePhase) =>
    `    ${name.padEnd(8)} acks ${String(p.acks).padStart(4)}  p50 ${f(p.p50, 2).padStart(6)}  p99 ${f(p.p99, 2).padStart(7)}  max ${f(p.max, 1).padStart(7)} ms  lost ${p.lost}  loop max ${f(p.loopMaxMs, 0).padStart(5)} ms (gc ${f(p.gcMaxMs.minor, 0)}/${f(p.gcMaxMs.major, 0)})`;
  const d = s.dashboard;
  return [
    row("quiet", s.quiet),
    ...s.rounds.map((p, i) => row(`round ${i + 1}`, p)),
    `    flood rounds: ack p99 ${spread(s.rounds.map((p) => p.p99), 1)} ms, loop max ${spread(s.rounds.map((p) => p.loopMaxMs), 0)} ms (quiet: ${f(s.quiet.p99, 1)} ms, ${f(s.quiet.loopMaxMs, 0)} ms)`,
    ...(d === undefined ? [] : [`    a dashboard open throughout: ${d.deltas} deltas, ${d.gaps} gaps, ${d.connected ? "still connected" : "DROPPED by the hub"}`]),
  ];
}

/** The targets for a flood case, on the hub with its default caps. */
export function floodChecks(what: string, s: FloodSide): string[] {
  const p99 = Math.max(...s.rounds.map((p) => p.p99));
  const loop = Math.max(...s.rounds.map((p) => p.loopMaxMs));
  const lost = s.quiet.lost + s.rounds.reduce((n, p) => n + p.lost, 0);
  const check = (ok: boolean, line: string) => `  ${ok ? "PASS" : "FAIL"} ${line}`;
  return [
    check(p99 < 50, `${what}: a real agent's ack p99 under 50 ms in every round: worst ${f(p99, 2)} ms`),
    check(loop <= 50, `${what}: no event-loop block over 50 ms: worst ${f(loop, 0)} ms`),
    check(lost === 0, `${what}: no batch of the real agent lost or out of order: ${lost}`),
    ...(s.dashboard === undefined ? [] : [check(s.dashboard.gaps === 0 && s.dashboard.connected, `${what}: the dashboard open throughout took every delta: ${s.dashboard.gaps} gaps, ${s.dashboard.connected ? "connected" : "dropped"}`)]),
  ];
}

export function nameFloodLines(r: NameFloodResult): string[] {
  const row = (s: FloodSide) => [
    `  ${s.label.padEnd(13)} rss ${(s.before.rss / MB).toFixed(0)} → ${(s.after.rss / MB).toFixed(0)} MB, heap ${(s.before.heapUsed / MB).toFixed(0)} → ${(s.after.heapUsed / MB).toFixed(0)} MB; holds ${s.after.agents} agents, ${s.after.semaphores} semaphores, ${s.after.histories} histories; ${s.refused} flood messages refused`,
    ...floodPhaseLines(s),
  ];
  return [
    `name flood: ${r.sent} new semaphore names from one address, every agent gone after one batch; a real agent (10 semaphores at 200 ms) beside it`,
    ...row(r.capped),
    ...row(r.uncapped),
    ...floodChecks("name flood, default caps", r.capped),
  ];
}

if (/name-flood\.ts$/.test(process.argv[1] ?? "")) {
  const r = await nameFlood((line) => process.stderr.write(`${line}\n`));
  process.stdout.write(`${nameFloodLines(r).join("\n")}\n`);
  process.exit(0);
}
