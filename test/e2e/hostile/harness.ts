// The hostile suite's tools. Hostile agents: raw socket.io clients speaking the agent protocol (no
// agent library), optionally from another loopback address (127.0.0.2: the hub sees another
// remote address, as it would another host), with helpers to say hello, register and sample.
import { io, type Socket } from "socket.io-client";
import { makeHello, makeInfo, makeSample, makeSummary } from "../../fixtures/protocol.js";
import { HISTORY_FULL_BYTES } from "../../../shared/history/index.js";
import type { Hello, Sample } from "../../../shared/protocol/index.js";
import { expect } from "vitest";
import { onCleanup, until, type Child } from "../stream/harness.js";

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

const acksOf = (c: Child) => c.messages.flatMap((m) => (m.type === "ack" ? [m.ack] : []));

function expectOkInOrder(c: Child): void {
  const acks = acksOf(c);
  expect(acks.length).toBeGreaterThan(0);
  expect(acks.filter((a) => !a.ok)).toEqual([]);
  for (let i = 1; i < acks.length; i++) expect(acks[i].seq).toBeGreaterThan(acks[i - 1].seq);
}

/**
 * Every sample ack an agent child reported (notifyAcks): all ok, seqs strictly increasing. A test
 * can finish before the child's first batch is acked (on a loaded machine, its first interval),
 * so it waits up to 15 s for one.
 */
export async function expectAckedInOrder(c: Child): Promise<void> {
  await until(() => acksOf(c).length > 0, "the honest agent's first ack", 15_000);
  expectOkInOrder(c);
}

/** The hub's design scale: semaphores a hub at scale holds (atScale). */
export const SEMAPHORES = 10_000;

/**
 * Options and load for a hub child at its design scale: `atScale(url)` has 10 raw agents (kept
 * connected) register 1,000 semaphores each, in 100 fleet groups per service, with a few samples,
 * from LOAD_ADDRESS (the hub admits 10,000 semaphores per address: the honest agent is elsewhere).
 */
export const SCALE_OPTIONS = {
  maxHistories: SEMAPHORES + 100,
  maxHistoryBytes: (SEMAPHORES + 100) * HISTORY_FULL_BYTES,
  // Every connection of these tests shares one address.
  agentAddressBudget: { itemsPerSecond: 1_000_000, burst: 1_000_000 },
} as const;

export const LOAD_ADDRESS = "127.0.0.2";

export async function atScale(url: string): Promise<void> {
  for (let a = 0; a < SEMAPHORES / 1000; a++) {
    const agent = await rawAgent(url, { from: LOAD_ADDRESS });
    const list = ids("s", 1000);
    const ok = (ack: Ack, what: string) => {
      if (!ack.ok) throw new Error(`${what} refused: ${ack.error}`);
    };
    ok(await agent.hello(`load-${a}`, { service: `svc-${a % 5}`, instance: `i-${a}` }), "hello");
    ok(await agent.emit("register", { semaphores: list.map((id, i) => makeInfo(id, { name: `pool-${i % 100}` })) }), "register");
    for (let seq = 0; seq < 3; seq++) ok(await agent.samples(seq, list, { inUse: seq, available: 10 - seq }), "samples");
  }
}

/** A /healthz answer later than this means the hub's event loop was held (the freezes were 2-40 s). */
export const HEALTHZ_DEADLINE_MS = 3000;

/** Asks /healthz every 250 ms; `stop()` gives the requests that failed or took longer than HEALTHZ_DEADLINE_MS. */
export function probeHealth(url: string): { stop(): Promise<{ asked: number; late: string[] }> } {
  let running = true;
  let asked = 0;
  const late: string[] = [];
  const loop = (async () => {
    while (running) {
      const t0 = Date.now();
      asked++;
      try {
        const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(HEALTHZ_DEADLINE_MS) });
        if (res.status !== 200) late.push(`HTTP ${res.status}`);
        await res.text();
      } catch (err) {
        late.push(`${new Date(t0).toISOString()}: ${err instanceof Error ? err.message : String(err)}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { asked, late };
    },
  };
}

/**
 * Every sample ack the agent child reported through [from, to]: all ok, seqs contiguous, and
 * enough of them that its stream went on (a quarter of its intervals: a liveness bound).
 */
export function expectStreamWhole(c: Child, intervalMs: number, from: number, to: number): void {
  expectOkInOrder(c);
  const acks = acksOf(c);
  const seqs = acks.map((a) => a.seq);
  expect(seqs).toEqual(seqs.map((_, i) => seqs[0] + i));
  expect(acks.filter((a) => a.at > from && a.at <= to).length).toBeGreaterThan((to - from) / intervalMs / 4);
}
