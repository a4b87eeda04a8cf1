// The name-flood case: hub memory after floods of new names, as issue 28 found them (three short
// floods from one process: agents that say hello, register 1,000 fresh semaphores, send one batch
// and leave, every one kept for hours). The same flood against the hub with its default caps and
// against the hub with the caps lifted (as it was before it had any), in one run.
// Alone: `node --import tsx bench/hub/name-flood.ts` (BENCH_FLOOD_ROUNDS, BENCH_FLOOD_AGENTS).
import { io } from "socket.io-client";
import { HUB_NODE_FLAGS } from "../../main/hub/node-flags.js";
import type { HubAdmission, Sample } from "../../shared/protocol/index.js";
import { spawnChild, type Child } from "./child.js";

type Msg =
  | { type: "listening"; url: string }
  | { type: "mem"; rss: number; heapUsed: number; agents: number; semaphores: number; histories: number; admission?: HubAdmission };

export interface FloodSide {
  readonly label: string;
  readonly before: Extract<Msg, { type: "mem" }>;
  readonly after: Extract<Msg, { type: "mem" }>;
  /** Flood messages the hub refused (a cap). */
  readonly refused: number;
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

/** A hub child with `admission`'s caps, its memory before and after `rounds` of `agents` flooders. */
export async function side(label: string, admission: object, rounds: number, agents: number, log: (line: string) => void, flood: Flooder = (url, name) => floodAgent(url, name)): Promise<FloodSide> {
  const hub: Child<Msg> = spawnChild<Msg>("./name-flood-hub.ts", { BENCH_ADMISSION: JSON.stringify(admission) }, ["--expose-gc", ...HUB_NODE_FLAGS]);
  const { url } = await hub.next("listening", 60_000);
  hub.send("mem");
  const before = await hub.next("mem", 60_000);
  let refused = 0;
  for (let r = 0; r < rounds; r++) {
    // A few at a time, as a flooding process would open them.
    for (let i = 0; i < agents; i += 4) {
      const batch = Array.from({ length: Math.min(4, agents - i) }, (_, j) => flood(url, `${label}-r${r}-a${i + j}`, i + j));
      for (const n of await Promise.all(batch)) refused += n;
    }
    log(`  name flood (${label}): round ${r + 1} of ${rounds} sent`);
  }
  hub.send("mem");
  const after = await hub.next("mem", 120_000);
  await hub.stop();
  return { label, before, after, refused };
}

export async function nameFlood(log: (line: string) => void, rounds = Number(process.env.BENCH_FLOOD_ROUNDS ?? 3), agents = Number(process.env.BENCH_FLOOD_AGENTS ?? 20)): Promise<NameFloodResult> {
  const capped = await side("default caps", {}, rounds, agents, log);
  const lifted = 100_000_000;
  const uncapped = await side("caps lifted", { maxAgents: lifted, maxAgentsPerAddress: lifted, maxSemaphores: lifted, maxSemaphoresPerAddress: lifted }, rounds, agents, log);
  return { sent: rounds * agents * PER_AGENT, capped, uncapped };
}

const MB = 1024 * 1024;

export function nameFloodLines(r: NameFloodResult): string[] {
  const row = (s: FloodSide) =>
    `  ${s.label.padEnd(13)} rss ${(s.before.rss / MB).toFixed(0)} → ${(s.after.rss / MB).toFixed(0)} MB, heap ${(s.before.heapUsed / MB).toFixed(0)} → ${(s.after.heapUsed / MB).toFixed(0)} MB; holds ${s.after.agents} agents, ${s.after.semaphores} semaphores, ${s.after.histories} histories; ${s.refused} flood messages refused`;
  return [`name flood: ${r.sent} new semaphore names from one address, every agent gone after one batch`, row(r.capped), row(r.uncapped)];
}

if (/name-flood\.ts$/.test(process.argv[1] ?? "")) {
  const r = await nameFlood((line) => process.stderr.write(`${line}\n`));
  process.stdout.write(`${nameFloodLines(r).join("\n")}\n`);
  process.exit(0);
}
