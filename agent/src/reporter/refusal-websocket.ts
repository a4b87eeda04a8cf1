// engine.io-client's Node WebSocket transport (what socket.io-client uses; its CommonJS build does
// not re-export it, hence the direct dependency), but a hub that refuses the handshake with an HTTP answer
// (a cap on open connections, an origin it does not take) is heard: ws reports only "Unexpected
// server response: <status>" and socket.io-client only "websocket error", while the hub's answer
// says why. Its body (text, or engine.io's JSON `{ code, message }`) is read, bounded, and becomes
// the connect error's message. Everything ws calls back into here is guarded.
import type { IncomingMessage } from "node:http";
import { NodeWebSocket } from "engine.io-client";
import { guard } from "./guard.js";

/** Bytes of a refusal's body read for its reason; the rest is not waited for. */
const MAX_BODY_BYTES = 1024;
/** Characters of the reason kept (status().lastError is for a person to read). */
const MAX_REASON = 200;

/** The ws client as much as this needs of it. */
interface WsClient {
  on(event: "unexpected-response", listener: (req: unknown, res: IncomingMessage) => void): unknown;
  terminate(): void;
}

/** The reason in a refusal's body: engine.io's JSON message, else the text; control characters dropped. */
export function refusalReason(status: number | undefined, body: string): string {
  let text = body;
  try {
    const parsed: unknown = JSON.parse(body);
    const message = (parsed as { message?: unknown } | null)?.message;
    if (typeof message === "string") text = message;
  } catch {
    // Not JSON: the text is the reason.
  }
  // eslint-disable-next-line no-control-regex
  const reason = text.replace(/[\u0000-\u001f\u007f]+/g, " ").trim().slice(0, MAX_REASON);
  const head = `hub refused the connection (HTTP ${status ?? "?"})`;
  return reason === "" ? head : `${head}: ${reason}`;
}

export class RefusalAwareWebSocket extends NodeWebSocket {
  /** Why the hub refused this transport's handshake, once its answer is read. */
  private refusal: string | undefined;

  override createSocket(uri: string, protocols: string | string[] | undefined, opts: Record<string, unknown>): unknown {
    const ws = super.createSocket(uri, protocols, opts) as WsClient;
    // With a listener, ws leaves the answer to it: read it, then end the handshake as ws would.
    ws.on("unexpected-response", (_req, res) => guard(() => this.readRefusal(ws, res)));
    return ws;
  }

  protected override onError(reason: string, description: unknown, context?: unknown): this {
    return super.onError(this.refusal ?? reason, description, context);
  }

  private readRefusal(ws: WsClient, res: IncomingMessage): void {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let done = false;
    const finish = () =>
      guard(() => {
        if (done) return;
        done = true;
        this.refusal = refusalReason(res.statusCode, Buffer.concat(chunks).toString("utf8"));
        ws.terminate();
      });
    res.on("data", (chunk: Buffer) =>
      guard(() => {
        if (bytes < MAX_BODY_BYTES) chunks.push(chunk.subarray(0, MAX_BODY_BYTES - bytes));
        bytes += chunk.length;
        if (bytes >= MAX_BODY_BYTES) res.destroy();
      }),
    );
    res.on("error", () => undefined);
    res.once("close", finish);
  }
}
