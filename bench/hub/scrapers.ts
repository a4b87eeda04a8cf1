// Child of the /metrics case: BENCH_SCRAPERS scrapers reading BENCH_URL/metrics back to back
// from "go" until "stop", in a process of their own so that reading ~25 MB bodies does not delay the
// honest agent's acks as the parent times them. Answers "done" with each whole-body time (ms).
const url = `${process.env.BENCH_URL ?? ""}/metrics`;
const post = (m: unknown) => process.send?.(m);
let stopping = false;
const times: number[] = [];

async function scraper(): Promise<void> {
  while (!stopping) {
    const t0 = performance.now();
    const res = await fetch(url);
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`/metrics: HTTP ${res.status}`);
    times.push(performance.now() - t0);
  }
}

let running: Promise<unknown> = Promise.resolve();
process.on("message", (raw) => {
  const cmd = (raw as { cmd?: string }).cmd;
  if (cmd === "go") running = Promise.all(Array.from({ length: Number(process.env.BENCH_SCRAPERS ?? 4) }, scraper));
  if (cmd === "stop") {
    stopping = true;
    void running.then(() => post({ type: "done", times }));
  }
});
process.on("disconnect", () => process.exit(0));
post({ type: "ready" });
