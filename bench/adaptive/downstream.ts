// A downstream with a knee: a node:http server with a fixed pool of workers, each request holding
// one for serviceMs, the rest waiting in an unbounded FIFO queue. Past `workers` in flight its
// latency grows with the queue. A request whose caller gave up before a worker took it is
// dropped unserved; one already being served runs to the end. argv: a JSON list of phases { atMs, workers, serviceMs }.
import { createServer, type ServerResponse } from "node:http";

interface Phase {
  atMs: number;
  workers: number;
  serviceMs: number;
}

const phases = JSON.parse(process.argv[2] ?? "[]") as Phase[];
const started = performance.now();
let busy = 0;
const queue: ServerResponse[] = [];

function phase(): Phase {
  const age = performance.now() - started;
  let p = phases[0];
  for (const q of phases) if (q.atMs <= age) p = q;
  return p;
}

function next(): void {
  const p = phase();
  while (busy < p.workers && queue.length > 0) {
    const res = queue.shift() as ServerResponse;
    if (res.destroyed || res.socket === null || res.socket.destroyed) continue;
    busy++;
    setTimeout(() => {
      busy--;
      res.end("ok");
      next();
    }, p.serviceMs);
  }
}

const server = createServer((_req, res) => {
  queue.push(res);
  next();
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  const addr = server.address();
  process.send?.({ port: typeof addr === "object" && addr !== null ? addr.port : 0 });
});
// A phase change that frees workers serves the queue at once.
setInterval(next, 10).unref();
process.on("disconnect", () => process.exit(0));
