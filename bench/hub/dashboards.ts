// Child: BENCH_DASHBOARDS raw /ui connections opened at once against BENCH_URL; each one admitted
// waits for its snapshot, then asks snapshot:get again and again until "stop". Reports what was
// admitted, refused (and why) and answered.
import { io, type Socket } from "socket.io-client";

const url = process.env.BENCH_URL!;
const count = Number(process.env.BENCH_DASHBOARDS ?? 100);
let running = true;
let snapshots = 0;
let rateRefused = 0;
let failed = 0;
let dropped = 0;
const reasons: Record<string, number> = {};
const sockets: Socket[] = [];

async function dashboard(): Promise<boolean> {
  const socket = io(`${url}/ui`, { forceNew: true, reconnection: false, transports: ["websocket"], auth: { protocol: 1 } });
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
    return false;
  }
  if (!(await first)) {
    dropped++;
    return true;
  }
  snapshots++;
  void (async () => {
    while (running && socket.connected) {
      try {
        const ack = (await socket.timeout(60_000).emitWithAck("snapshot:get", {})) as { ok: boolean; error?: string };
        if (ack.ok) snapshots++;
        else if (ack.error === "rate limit exceeded") {
          rateRefused++;
          await new Promise((r) => setTimeout(r, 250));
        } else failed++;
      } catch {
        failed++;
      }
    }
  })();
  return true;
}

const admitted = (await Promise.all(Array.from({ length: count }, dashboard))).filter(Boolean).length;
process.send?.({ type: "dashboards:ready", admitted });
process.on("message", (raw) => {
  if ((raw as { cmd: string }).cmd !== "stop") return;
  running = false;
  for (const s of sockets) s.disconnect();
  process.send?.({ type: "dashboards:done", admitted, refusedBy: reasons, snapshots, rateRefused, failed, dropped });
});
process.on("disconnect", () => process.exit(0));
