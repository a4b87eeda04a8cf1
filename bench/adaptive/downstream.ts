// A downstream with a knee: a node:http server with a fixed pool of workers, each request holding
// one for serviceMs, the rest waiting in an unbounded FIFO queue. Past `workers` in flight its
// latency grows with the queue. A request whose caller gave up before a worker took it is
// dropped unserved; one already being served runs to the end. argv: the first phase as JSON
// { workers, serviceMs }; the parent sends the next ones as IPC messages, to every contender's
// downstream at the same instant (a clock per child would switch them apart by their start-up skew).
import { createServer, type ServerResponse } from "node:http";

interface Phase {
  workers: number;
  serviceMs: number;
}

let phase = JSON.parse(process.argv[2] ?? "{}") as Phase;
let busy = 0;
const queue: ServerResponse[] = [];

function next(): void {
  const p = phase;
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
process.on("message", (m) => {
  phase = m as Phase;
  // A phase with more workers serves the queue at once.
  next();
});
process.on("disconnect", () => process.exit(0));
