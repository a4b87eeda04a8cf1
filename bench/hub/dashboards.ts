// Child: BENCH_DASHBOARDS raw /ui connections opened at once against BENCH_URL; each one admitted
// waits for its snapshot. Then BENCH_SNAPSHOT_REQUESTS `snapshot:get` in all, one at a time, each
// no sooner than BENCH_SNAPSHOT_EVERY_MS after the one before and from the next dashboard in turn
// (so every round builds as many snapshots, whatever the machine's speed: the siege's figures
// swung with how many a round was answered; a dashboard the hub dropped connects again). Reports
// what was admitted, refused (and why) and answered once every request is answered, or at "stop".
import { io, type Socket } from "socket.io-client";
import { Decoder, Encoder } from "socket.io-parser";

const url = process.env.BENCH_URL!;
const count = Number(process.env.BENCH_DASHBOARDS ?? 100);
const requests = Number(process.env.BENCH_SNAPSHOT_REQUESTS ?? 30);
const everyMs = Number(process.env.BENCH_SNAPSHOT_EVERY_MS ?? 500);
let running = true;
let snapshots = 0;
let rateRefused = 0;
let failed = 0;
let dropped = 0;
const reasons: Record<string, number> = {};
const sockets: Socket[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Payloads from this long (snapshots, deltas at 10,000 semaphores) are skimmed, not parsed. */
const SKIM_FROM = 64 * 1024;
let disconnected = 0;
let reconnected = 0;

/**
 * A big payload's event name, or whether an answer was ok: all these dashboards act on. Parsing
 * eight dashboards' snapshots and deltas in full fell behind, and the hub dropped them (as it
 * should), which changed the load a round put on it.
 */
function skim(str: string): unknown {
  try {
    if (str.length < SKIM_FROM) return JSON.parse(str);
    return str.startsWith('["') ? [JSON.parse(`${str.slice(0, str.indexOf(","))}]`)[0]] : [{ ok: str.startsWith('[{"ok":true') }];
  } catch {
    // What socket.io-parser's own parse gives for text that is not JSON.
    return false;
  }
}

class SkimDecoder extends Decoder {
  constructor() {
    super();
    Object.assign(this, { tryParse: skim });
  }
}

async function dashboard(): Promise<Socket | undefined> {
  const socket = io(`${url}/ui`, { forceNew: true, reconnection: false, transports: ["websocket"], auth: { protocol: 1 }, parser: { Encoder, Decoder: SkimDecoder } });
  sockets.push(socket);
  // A dashboard dropped before its snapshot (the hub's write-buffer bound) just stops.
  const first = new Promise<boolean>((resolve) => {
    socket.once("snapshot", () => resolve(true));
    socket.once("disconnect", () => resolve(false));
  });
  const why = await new Promise<string | null>((resolve) => {
    socket.once("connect", () => resolve(null));
    socket.once("connect_error", (err) => resolve(err.message));
  });
  if (why !== null) {
    reasons[why] = (reasons[why] ?? 0) + 1;
    return undefined;
  }
  if (!(await first)) {
    dropped++;
    return socket;
  }
  snapshots++;
  socket.once("disconnect", () => {
    if (running) disconnected++;
  });
  return socket;
}

function done(): void {
  if (!running) return;
  running = false;
  for (const s of sockets) s.disconnect();
  process.send?.({ type: "dashboards:done", admitted: admitted.length, refusedBy: reasons, snapshots, rateRefused, failed, dropped, disconnected, reconnected });
}

/**
 * The requests, in turn over the dashboards admitted. One the hub dropped meanwhile (it fell
 * behind: the machine's load decides which, and when) is connected again, and the snapshot that
 * connection gets is the request; one refused by the rate limit is asked again.
 */
async function ask(): Promise<void> {
  const slots = [...admitted];
  let next = performance.now();
  for (let i = 0, tries = 0; i < requests && running && slots.length > 0 && tries < 3 * requests; tries++) {
    await sleep(Math.max(0, next - performance.now()));
    next = performance.now() + everyMs;
    const slot = i % slots.length;
    if (!slots[slot].connected) {
      const socket = await dashboard();
      if (socket?.connected === true) {
        slots[slot] = socket;
        reconnected++;
        i++;
      }
      continue;
    }
    try {
      const ack = (await slots[slot].timeout(60_000).emitWithAck("snapshot:get", {})) as { ok: boolean; error?: string };
      if (ack.ok) snapshots++;
      else if (ack.error === "rate limit exceeded") {
        rateRefused++;
        continue;
      } else failed++;
    } catch {
      // Dropped before the answer came: asked again, of its new connection.
      if (!slots[slot].connected) continue;
      failed++;
    }
    i++;
  }
  done();
}

const admitted = (await Promise.all(Array.from({ length: count }, dashboard))).filter((s): s is Socket => s !== undefined);
process.send?.({ type: "dashboards:ready", admitted: admitted.length });
process.on("message", (raw) => {
  const cmd = (raw as { cmd: string }).cmd;
  if (cmd === "ask") void ask();
  else if (cmd === "stop") done();
});
process.on("disconnect", () => process.exit(0));
