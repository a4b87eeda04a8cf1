// The hostile suite's tools. Hostile agents: raw socket.io clients speaking the agent protocol (no
// agent library), optionally from another loopback address (127.0.0.2: the hub sees another
// remote address, as it would another host), with helpers to say hello, register and sample.
import { io, type Socket } from "socket.io-client";
import { makeHello, makeInfo, makeSample, makeSummary } from "../../fixtures/protocol.js";
import type { Hello, Sample } from "../../../shared/protocol/index.js";
import { expect } from "vitest";
import { onCleanup, type Child } from "../stream/harness.js";

export type Ack = { ok: boolean; error?: string; seq?: number };

export interface RawAgent {
  readonly socket: Socket;
  emit(event: string, payload: unknown): Promise<Ack>;
  hello(agentId: string, over?: Partial<Hello>): Promise<Ack>;
  /** A register of `ids`, each a semaphore of cap 10. */
  register(ids: readonly string[]): Promise<Ack>;
  samples(seq: number, ids: readonly string[], over?: Partial<Sample>): Promise<Ack>;
  close(): void;
}

export interface RawOptions {
  /** The local address to connect from (a loopback alias such as 127.0.0.2). */
  from?: string;
  token?: string;
}

/** A connected raw agent; rejects with the connect_error message. */
export function rawAgent(url: string, opts: RawOptions = {}): Promise<RawAgent> {
  const socket = io(`${url}/agent`, {
    forceNew: true,
    reconnection: false,
    transports: ["websocket"],
    auth: { protocol: 1, ...(opts.token !== undefined ? { token: opts.token } : {}) },
    // engine.io-client hands localAddress to ws in Node; its types leave it out.
    ...(opts.from !== undefined ? ({ localAddress: opts.from } as object) : {}),
  });
  onCleanup(() => socket.disconnect());
  const emit = (event: string, payload: unknown) => socket.timeout(30_000).emitWithAck(event, payload) as Promise<Ack>;
  const agent: RawAgent = {
    socket,
    emit,
    hello: (agentId, over = {}) => emit("hello", makeHello(agentId, over)),
    register: (ids) => emit("register", { semaphores: ids.map((id) => makeInfo(id)) }),
    samples: (seq, ids, over = {}) =>
      emit("samples", {
        seq,
        t: Date.now(),
        intervalMs: 1000,
        items: ids.map((id) => makeSample({ id, inUse: 2, acquired: 5, released: 5, waitMs: makeSummary(1, 2), holdMs: makeSummary(10, 20), ...over })),
      }),
    close: () => socket.disconnect(),
  };
  return new Promise((resolve, reject) => {
    socket.once("connect", () => resolve(agent));
    socket.once("connect_error", (err) => reject(err));
  });
}

/** `n` semaphore ids with a prefix. */
export const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

/** Every sample ack an agent child reported (notifyAcks): all ok, seqs strictly increasing. */
export function expectAckedInOrder(c: Child): void {
  const acks = c.messages.flatMap((m) => (m.type === "ack" ? [m.ack] : []));
  expect(acks.length).toBeGreaterThan(0);
  expect(acks.filter((a) => !a.ok)).toEqual([]);
  for (let i = 1; i < acks.length; i++) expect(acks[i].seq).toBeGreaterThan(acks[i - 1].seq);
}
