// Open engine.io connections per remote address and in all, checked at each new connection's
// first request: a connection that has not yet joined a namespace is under no namespace's cap, so
// without this one a flood of them could hold the hub's file descriptors until socket.io's connect
// timeout. The bound is what honest clients can use: the agents held, those waiting for hello and
// the dashboards. refuse()'s sentence is the body of engine.io's answer (400 text to a WebSocket
// upgrade, 403 JSON to polling): the agent reads it and shows it as its lastError.
import type { IncomingMessage } from "node:http";
import { AddressCounts } from "./address-counts.js";

export interface ConnectionCaps {
  readonly total: number;
  readonly perAddress: number;
}

/** engine.io's connection, as much of it as this needs. */
interface EngineConn {
  readonly remoteAddress: string;
  once(event: "close", listener: () => void): unknown;
}

export class ConnectionCap {
  private open = 0;
  private readonly perAddress = new AddressCounts();

  constructor(private readonly caps: ConnectionCaps) {}

  /** Why a new connection's request is refused (a sentence), or null. */
  refuse(req: IncomingMessage): string | null {
    const address = req.socket.remoteAddress ?? "";
    if (this.perAddress.of(address) >= this.caps.perAddress) return `too many connections from this address (at most ${this.caps.perAddress})`;
    if (this.open >= this.caps.total) return `too many connections to this hub (at most ${this.caps.total})`;
    return null;
  }

  /** engine.io opened `conn`: counted until it closes. */
  opened(conn: EngineConn): void {
    const address = conn.remoteAddress;
    this.open++;
    this.perAddress.add(address);
    conn.once("close", () => {
      this.open--;
      this.perAddress.remove(address);
    });
  }
}
