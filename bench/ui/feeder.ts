// The UI benchmark's fleet: raw socket.io-client agents speaking docs/protocol.md (hello,
// register, then one samples batch a second each), in a process of their own so the hub and the
// measuring process stay quiet. Usage: node --import tsx feeder.ts <hubUrl> <agents> <semaphoresPerAgent>
// Prints "ready" once every agent has registered.
import { io, type Socket } from "socket.io-client";
import type { SemaphoreInfo } from "../../shared/protocol/types.js";
import { sampleOf } from "./samples.js";

const [url, agentsArg, perArg] = process.argv.slice(2);
const AGENTS = Number(agentsArg ?? 50);
const PER = Number(perArg ?? 10);
if (url === undefined || !(AGENTS > 0) || !(PER > 0)) {
  console.error("usage: feeder.ts <hubUrl> <agents> <semaphoresPerAgent>");
  process.exit(2);
}

function info(id: string, cap: number): SemaphoreInfo {
  return { id, name: id, kind: "semaphore", cap, queue: "fifo", maxWaiters: null, acquireTimeoutMs: null, leaseTimeoutMs: null, leakThresholdMs: null, scope: "process" };
}

async function agent(a: number): Promise<void> {
  const service = `svc-${String(a % 10).padStart(2, "0")}`;
  const instance = `inst-${String(a).padStart(2, "0")}`;
  const socket: Socket = io(`${url}/agent`, { transports: ["websocket"], auth: { protocol: 1 }, forceNew: true, reconnection: false });
  await new Promise<void>((res, rej) => {
    socket.once("connect", () => res());
    socket.once("connect_error", rej);
  });
  const emit = async (event: string, payload: unknown) => {
    const ack = (await socket.timeout(10_000).emitWithAck(event, payload)) as { ok: boolean; error?: string };
    if (!ack.ok) throw new Error(`${event} refused: ${ack.error ?? "?"}`);
  };
  await emit("hello", { agentId: `${service}-${instance}`, service, instance, pid: 10_000 + a, host: `${instance}.bench`, runtime: "node 20", agentVersion: "0.1.0", startedAt: Date.now() });
  const ids = Array.from({ length: PER }, (_, s) => `sem-${s}`);
  await emit("register", { semaphores: ids.map((id, s) => info(id, 4 + 4 * (s % 5))) });
  let seq = 0;
  let i = 0;
  // Agents are not in step: each sends at its own offset within the second.
  setTimeout(() => {
    setInterval(() => {
      const n = i++;
      const items = ids.map((id, s) => sampleOf(id, 4 + 4 * (s % 5), n, a + s / 3));
      socket.timeout(10_000).emit("samples", { seq: seq++, t: Date.now(), intervalMs: 1000, items }, () => undefined);
    }, 1000);
  }, (a * 1000) / AGENTS);
}

await Promise.all(Array.from({ length: AGENTS }, (_, a) => agent(a)));
console.log("ready");
process.on("SIGTERM", () => process.exit(0));
