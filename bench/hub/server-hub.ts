// Child: the real hub (createHub). IPC as server-common.ts; "hour" also fills a fresh history
// store (the hub's own HistoryStore) with an hour of this workload's samples, then another, to
// measure bytes per semaphore per hour of history without waiting an hour.
import { createHub } from "../../main/hub/index.js";
import { HISTORY_FULL_BYTES, HistoryStore } from "../../shared/history/index.js";
import { serve } from "./server-common.js";
import { infos, SemaphoreModel } from "./workload.js";

const semaphores = Number(process.env.BENCH_TOTAL_SEMAPHORES ?? 10_000);
// Room for every semaphore's history (the default memory bound, 1 GiB of full histories, holds
// 3,515); and every simulated agent shares one address, so that budget is the fleet's.
const hub = await createHub({
  port: 0,
  log: () => undefined,
  maxHistories: Math.max(10_000, semaphores),
  maxHistoryBytes: Math.max(10_000, semaphores) * HISTORY_FULL_BYTES,
  agentAddressBudget: { itemsPerSecond: 100_000_000, burst: 100_000_000 },
});

serve(hub.url, {
  extra: () => ({ historyBytes: hub.history.bytes(), histories: hub.history.size }),
  hour: () => {
    const n = 20;
    const models = infos(n).map((info, i) => new SemaphoreModel(info, i));
    const store = new HistoryStore({ maxSemaphores: n });
    let t = Date.now();
    const fill = (seconds: number) => {
      for (let s = 0; s < seconds; s++) {
        t += 1000;
        for (let i = 0; i < n; i++) store.push(`k${i}`, models[i].sample(), t, 1000);
      }
      return store.bytes() / n;
    };
    const oneHour = fill(3600);
    const twoHours = fill(3600);
    return { bytesPerSemaphore: oneHour, growthPerHour: twoHours - oneHour, semaphores: n };
  },
  close: () => hub.close(),
});
