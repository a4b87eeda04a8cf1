// Child of the name-flood and cap-flood cases: the real hub (createHub, its default options but
// the caps given in BENCH_ADMISSION as JSON), served as every bench server is (server-common.ts:
// "mark"/"report" give the window's event-loop delay and GC pauses, BENCH_PROFILE_FILE a CPU
// profile of it). IPC "mem": its memory after a full GC and what it holds.
import { createHub } from "../../main/hub/index.js";
import { serve } from "./server-common.js";

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
serve(hub.url, { close: () => hub.close() });
