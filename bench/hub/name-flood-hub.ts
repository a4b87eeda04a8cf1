// Child of the name-flood case: the real hub (createHub, its default options but the caps given
// in BENCH_ADMISSION as JSON). IPC: "mem" answers its memory after a full GC and what it holds.
import { createHub } from "../../main/hub/index.js";

const post = (m: unknown) => process.send?.(m);
const gc = (globalThis as { gc?: () => void }).gc;
const hub = await createHub({ port: 0, log: () => undefined, admission: JSON.parse(process.env.BENCH_ADMISSION ?? "{}") as object });

process.on("message", (raw) => {
  if ((raw as { cmd?: string }).cmd !== "mem") return;
  gc?.();
  const { rss, heapUsed } = process.memoryUsage();
  const state = hub.state();
  post({ type: "mem", rss, heapUsed, agents: state.agents.length, semaphores: state.semaphores.length, histories: hub.history.size, admission: state.hub.admission });
});
process.on("disconnect", () => void hub.close().then(() => process.exit(0)));
post({ type: "listening", url: hub.url });
