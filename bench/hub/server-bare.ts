// Child: the baseline. A bare socket.io server on /agent that checks every message as the hub
// does (a `samples` batch with SamplesCheck, the fast path held to the schema; anything else with
// parsePayload) and acks, storing nothing: what receiving and checking the stream costs before
// the hub does anything with it.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "socket.io";
import { AGENT_NAMESPACE, agentPayloadSchemas, LIMITS, parsePayload } from "../../shared/protocol/index.js";
import { SamplesCheck } from "../../shared/protocol/samples-check.js";
import { serve } from "./server-common.js";

const http = createServer();
const io = new Server(http, { maxHttpBufferSize: LIMITS.maxPacketBytes, serveClient: false });
io.of(AGENT_NAMESPACE).on("connection", (socket) => {
  for (const event of Object.keys(agentPayloadSchemas) as (keyof typeof agentPayloadSchemas)[]) {
    socket.on(event, (payload: unknown, ack?: (a: unknown) => void) => {
      const p = event === "samples" ? new SamplesCheck(payload).step()! : parsePayload(agentPayloadSchemas[event], payload);
      if (!p.ok) return ack?.({ ok: false, error: p.error });
      ack?.(event === "samples" ? { ok: true, seq: (p.value as { seq: number }).seq } : { ok: true });
    });
  }
});
await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));

serve(`http://127.0.0.1:${(http.address() as AddressInfo).port}`, {
  close: () => new Promise<void>((r) => void io.close(() => r())),
});
