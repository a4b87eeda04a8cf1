// Real hubs on free ports and raw socket.io clients (no agent library): what the hub tests share.
import { io, type Socket } from "socket.io-client";
import type { Hello, Sample, SemaphoreInfo } from "../../../shared/protocol/index.js";
import type { UiDelta, UiSnapshot } from "../../../shared/ui-protocol/index.js";
import { createHub, type Hub, type HubOptions } from "../../../main/hub/index.js";
import { makeHello, makeInfo, makeSample, makeSummary } from "../../fixtures/protocol.js";

export { T0 } from "../../fixtures/protocol.js";

const cleanups: (() => unknown)[] = [];

/** Runs (and forgets) every cleanup registered since the last call, newest first. */
export async function cleanupAll(): Promise<void> {
  while (cleanups.length > 0) await cleanups.pop()?.();
}

export function onCleanup(fn: () => unknown): void {
  cleanups.push(fn);
}

export async function startHub(opts: HubOptions = {}): Promise<Hub> {
  const hub = await createHub({ port: 0, log: () => undefined, ...opts });
  onCleanup(() => hub.close());
  return hub;
}

export interface ClientOptions {
  auth?: Record<string, unknown>;
  transports?: ("websocket" | "polling")[];
  /** The local address to connect from (a loopback alias such as 127.0.0.2: the hub sees another remote host). */
  from?: string;
  /** Adds listeners before the socket connects: a /ui snapshot can come in the same read as the connection. */
  listen?: (socket: Socket) => void;
}

/** A raw socket.io client on `ns`; resolves once connected, rejects with the connect_error message. */
export function client(url: string, ns: "/agent" | "/ui" | "/replay", opts: ClientOptions = {}): Promise<Socket> {
  const socket = io(`${url}${ns}`, {
    forceNew: true,
    reconnection: false,
    transports: opts.transports ?? ["websocket"],
    auth: opts.auth ?? { protocol: 1 },
    ...(opts.from !== undefined ? ({ localAddress: opts.from } as object) : {}),
  });
  onCleanup(() => socket.disconnect());
  opts.listen?.(socket);
  return new Promise((resolve, reject) => {
    socket.once("connect", () => resolve(socket));
    socket.once("connect_error", (err) => reject(err));
  });
}

/**
 * A /ui client whose every snapshot goes to `store` and every delta to `onDelta`, both listened for
 * before it connects; resolves once the first snapshot is applied.
 */
export async function storeClient(url: string, store: { applySnapshot(s: UiSnapshot): void }, onDelta: (d: UiDelta) => void): Promise<Socket> {
  let first!: Promise<void>;
  const socket = await client(url, "/ui", {
    listen: (s) => {
      first = new Promise<void>((resolve) => s.once("snapshot", () => resolve()));
      s.on("snapshot", (snap: UiSnapshot) => store.applySnapshot(snap));
      s.on("delta", onDelta);
    },
  });
  await first;
  return socket;
}

/** emit with an ack, as a promise. */
export function request<T = Record<string, unknown>>(socket: Socket, event: string, payload?: unknown, timeoutMs = 5000): Promise<T> {
  return (socket.timeout(timeoutMs).emitWithAck(event, payload) as Promise<T>);
}

export type AckAnswer = { ok: boolean; error?: string; seq?: number; [k: string]: unknown };

export const hello = makeHello;
export const info = makeInfo;
export const summaryOf = makeSummary;

/** A busy sample: 2 of 10 permits in use, 5 acquired and released, real wait and hold summaries. */
export function sample(id: string, over: Partial<Sample> = {}): Sample {
  return makeSample({ id, inUse: 2, acquired: 5, released: 5, waitMs: makeSummary(1, 2, 3), holdMs: makeSummary(10, 20), longestHoldMs: 15, ...over });
}

/** A connected agent past hello (and register, when infos are given). */
export async function agent(hub: Hub, agentId: string, infos: SemaphoreInfo[] = [], over: Partial<Hello> = {}, auth?: Record<string, unknown>): Promise<Socket> {
  const s = await client(hub.url, "/agent", auth === undefined ? {} : { auth });
  const h = await request<AckAnswer>(s, "hello", hello(agentId, over));
  if (!h.ok) throw new Error(`hello refused: ${h.error}`);
  if (infos.length > 0) {
    const r = await request<AckAnswer>(s, "register", { semaphores: infos });
    if (!r.ok) throw new Error(`register refused: ${r.error}`);
  }
  return s;
}

export async function getJson<T = Record<string, unknown>>(hub: Hub, path: string, init: RequestInit = {}): Promise<{ status: number; body: T; headers: Headers }> {
  const res = await fetch(`${hub.url}${path}`, init);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body: body as T, headers: res.headers };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function waitUntil(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** A dashboard on /ui, with the snapshot it got first and every delta after it. */
export async function dashboard(
  url: string,
  auth: Record<string, unknown> = { protocol: 1 },
): Promise<{ socket: Socket; snapshot: UiSnapshot; deltas: UiDelta[] }> {
  const socket = io(`${url}/ui`, { forceNew: true, reconnection: false, transports: ["websocket"], auth });
  onCleanup(() => socket.disconnect());
  const deltas: UiDelta[] = [];
  socket.on("delta", (d) => deltas.push(d));
  const snapshot = await new Promise<UiSnapshot>((resolve, reject) => {
    socket.once("snapshot", resolve);
    socket.once("connect_error", reject);
  });
  return { socket, snapshot, deltas };
}
