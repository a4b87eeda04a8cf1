// Child: many simulated agents in one process, each a raw socket.io-client connection that says
// hello, registers its semaphores and sends one samples batch per interval, timing every ack.
// IPC: "mark" starts a window, "report" ends it with the acks' latencies and counts.
import { io, type Socket } from "socket.io-client";
import type { SamplesBatch } from "../../shared/protocol/index.js";
import type { ChildMessage } from "./messages.js";
import { hello, infos, SemaphoreModel } from "./workload.js";

const url = process.env.BENCH_URL!;
const agents = Number(process.env.BENCH_SIM_AGENTS);
const first = Number(process.env.BENCH_SIM_FIRST);
const semaphores = Number(process.env.BENCH_SEMAPHORES);
const intervalMs = Number(process.env.BENCH_INTERVAL_MS);
/** Connections opened per 100 ms: a fleet does not all connect in the same millisecond. */
const RAMP = 50;

const post = (m: ChildMessage) => process.send?.(m);
let latencies: number[] = [];
let itemsAcked = 0;
let refused = 0;
let timeouts = 0;
let connected = 0;
let cpu0 = process.cpuUsage();
const sockets: Socket[] = [];

/** Connects, trying again a few times: on a loaded machine a burst of connects can be reset. */
async function open(): Promise<Socket> {
  for (let attempt = 1; ; attempt++) {
    const socket = io(`${url}/agent`, { forceNew: true, reconnection: false, transports: ["websocket"], auth: { protocol: 1 } });
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once("connect", resolve);
        socket.once("connect_error", reject);
      });
      sockets.push(socket);
      return socket;
    } catch (err) {
      socket.disconnect();
      if (attempt >= 5) throw err;
      await new Promise((r) => setTimeout(r, 500 * attempt));
    }
  }
}

async function agent(n: number): Promise<void> {
  const socket = await open();
  const list = infos(semaphores);
  const models = list.map((info, i) => new SemaphoreModel(info, n * 1000 + i));
  const h = (await socket.timeout(30_000).emitWithAck("hello", hello(`bench-${n}`, n))) as { ok: boolean };
  const r = (await socket.timeout(30_000).emitWithAck("register", { semaphores: list })) as { ok: boolean };
  if (!h.ok || !r.ok) throw new Error(`agent ${n}: hello or register refused`);
  connected++;
  let seq = 0;
  const tick = () => {
    const batch: SamplesBatch = { seq: seq++, t: Date.now(), intervalMs, items: models.map((m) => m.sample()) };
    const start = performance.now();
    socket.timeout(10_000).emit("samples", batch, (err: Error | null, ack: { ok: boolean } | undefined) => {
      if (err !== null) return void timeouts++;
      if (ack?.ok !== true) return void refused++;
      latencies.push(performance.now() - start);
      itemsAcked += batch.items.length;
    });
  };
  // Spread over the interval, as independent processes would be.
  setTimeout(() => {
    tick();
    setInterval(tick, intervalMs);
  }, Math.random() * intervalMs);
}

process.on("message", (raw) => {
  const m = raw as { cmd: string };
  if (m.cmd === "mark") {
    latencies = [];
    itemsAcked = refused = timeouts = 0;
    cpu0 = process.cpuUsage();
  } else if (m.cmd === "report") {
    const cpu = process.cpuUsage(cpu0);
    post({ type: "sim", latencies, itemsAcked, refused, timeouts, connected, cpuUs: cpu.user + cpu.system });
  }
});
process.on("disconnect", () => {
  for (const s of sockets) s.disconnect();
  process.exit(0);
});

const started: Promise<void>[] = [];
for (let i = 0; i < agents; i++) {
  started.push(agent(first + i));
  if (i % RAMP === RAMP - 1) await new Promise((r) => setTimeout(r, 100));
}
await Promise.all(started);
post({ type: "ready", connected });
