// Child of the /metrics case: BENCH_SCRAPERS scrapers reading BENCH_URL/metrics back to back
// from "go" until "stop", in a process of their own so that reading ~25 MB bodies does not delay the
// honest agent's acks as the parent times them; BENCH_ACCEPT_ENCODING is what they ask for ("gzip",
// as Prometheus, or "identity"). Answers "done" with each whole-body time (ms) and bytes on the wire.
import { wireGet } from "./wire-get.js";

const url = `${process.env.BENCH_URL ?? ""}/metrics`;
const acceptEncoding = process.env.BENCH_ACCEPT_ENCODING ?? "identity";
const post = (m: unknown) => process.send?.(m);
let stopping = false;
const times: number[] = [];
const bytes: number[] = [];

async function scraper(): Promise<void> {
  while (!stopping) {
    const s = await wireGet(url, acceptEncoding);
    times.push(s.ms);
    bytes.push(s.bytes);
  }
}

let running: Promise<unknown> = Promise.resolve();
process.on("message", (raw) => {
  const cmd = (raw as { cmd?: string }).cmd;
  if (cmd === "go") running = Promise.all(Array.from({ length: Number(process.env.BENCH_SCRAPERS ?? 4) }, scraper));
  if (cmd === "stop") {
    stopping = true;
    void running.then(() => post({ type: "done", times, bytes }));
  }
});
process.on("disconnect", () => process.exit(0));
post({ type: "ready" });
