// undici Pool and Agent under instrument(), against a real HTTP server this file starts on a free
// port: the dispatcher's own stats as gauges, each request's wait (for a connection) and hold (until
// its response is read in full), a body never read caught as a leak at the caller's line (through
// undici's request() and through Node's own fetch), errors and aborts counted and passed on
// unchanged, untrack() putting dispatch back.
// Not run through the shared semantic suite: a request is granted when a connection writes it to
// a socket and its response is parsed from socket events, real I/O that the suite's virtual clock
// and microtask flushes do not reach.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent, Pool, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { instrument, SemscopeAdapterError } from "../../../agent/src/index.js";
import { here } from "../semantic-suite.js";
import { eventsOf, rejectionOf, thrownBy, tracked, uniqueName, until } from "./helpers.js";

/** Larger than a response stream's buffer: unread, it keeps the socket paused and the request running. */
const BIG = Buffer.alloc(1 << 20, 120);

let server: Server;
let url: string;
let url2: string;
const gates: ServerResponse[] = [];
const seen: string[] = [];

function route(req: IncomingMessage, res: ServerResponse): void {
  seen.push(req.url ?? "");
  if (req.url?.startsWith("/gate")) gates.push(res);
  else if (req.url === "/big") res.end(BIG);
  else if (req.url === "/boom") {
    res.writeHead(500);
    res.end("boom");
  } else res.end(`hello ${req.url}`);
}

beforeAll(async () => {
  server = createServer(route);
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  url = `http://127.0.0.1:${port}`;
  // The same server under a second origin, for an Agent's per-origin pools.
  url2 = `http://localhost:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

/** Answers the gated requests, oldest first. */
function openGates(n = gates.length): void {
  for (const res of gates.splice(0, n)) res.end("opened");
}

/** The stack's first frame (the adapter's and undici's own frames are cut). */
const firstFrame = (stack: string | undefined): string => (stack ?? "").split("\n").find((l) => /^\s*at /.test(l)) ?? "";

describe("undici adapter", () => {
  it("reports the pool's own stats (running, pending) and counts every request with its wait and hold", async () => {
    const pool = new Pool(url, { connections: 2 });
    const h = tracked(instrument(pool, { name: uniqueName("ud") }));
    expect(h.describe()).toMatchObject({ kind: "undici-pool", cap: 2, queue: "fifo", scope: "process" });
    const agree = () => {
      const s = h.snapshot();
      expect({ inUse: s.inUse, waiters: s.waiters }).toEqual({ inUse: pool.stats.running, waiters: pool.stats.pending });
    };
    const bodies = [1, 2, 3, 4, 5].map((i) => pool.request({ path: `/gate${i}`, method: "GET" }).then((r) => r.body.text()));
    await until(() => gates.length === 2, "2 requests at the server");
    agree();
    expect(h.snapshot()).toMatchObject({ cap: 2, inUse: 2, available: 0, waiters: 3 });
    expect(h.snapshot().oldestWaitMs).toBeGreaterThan(0);
    for (let served = 0; served < 5; served++) {
      await until(() => gates.length > 0, "a request at the server");
      openGates(1);
    }
    expect(await Promise.all(bodies)).toEqual(["opened", "opened", "opened", "opened", "opened"]);
    await until(() => pool.stats.running === 0, "all answered");
    agree();
    const s = h.sample(Date.now());
    expect(s).toMatchObject({ cap: 2, inUse: 0, waiters: 0, acquired: 5, released: 5, timeouts: 0, rejections: 0, aborts: 0 });
    expect(s.waitMs.count).toBe(5);
    expect(s.holdMs.count).toBe(5);
    // Three waited for one of the two connections.
    expect(s.waitMs.max).toBeGreaterThan(0);
    await pool.close();
  });

  it("a response body never read holds its connection: leak_suspected at the caller's line, via request() and via Node's fetch", async () => {
    const pool = new Pool(url, { connections: 4 });
    const h = tracked(instrument(pool, { name: uniqueName("ud"), leakThresholdMs: 80 }));
    const atRequest = here(); const unread = await request(`${url}/big`, { dispatcher: pool });
    const atFetch = here(); const unreadFetch = await fetch(`${url}/big`, { dispatcher: pool } as RequestInit);
    // A small body is read into the stream's buffer at once: its connection is free, not leaked.
    const small = await request(`${url}/small`, { dispatcher: pool });
    expect(unread.statusCode).toBe(200);
    expect(unreadFetch.status).toBe(200);
    const leaks = await until(() => (eventsOf(h, "leak_suspected").length === 2 ? eventsOf(h, "leak_suspected") : undefined), "two leak_suspected");
    expect(leaks.map((e) => firstFrame(e.stack))).toEqual([expect.stringContaining(`undici.test.ts:${atRequest.line}:`), expect.stringContaining(`undici.test.ts:${atFetch.line}:`)]);
    expect(pool.stats.running).toBe(2);
    expect(h.snapshot()).toMatchObject({ inUse: 2, holders: [{ weight: 1 }, { weight: 1 }] });
    await unread.body.dump();
    await unreadFetch.arrayBuffer();
    await small.body.text();
    await until(() => eventsOf(h, "leak_resolved").length === 2, "leak_resolved for both");
    expect(h.sample(Date.now())).toMatchObject({ inUse: 0, acquired: 3, released: 3 });
    await pool.close();
  });

  it("passes responses and errors through unchanged: an HTTP 500 is a response, a refused connection is the request's error", async () => {
    const pool = new Pool(url, { connections: 1 });
    const h = tracked(instrument(pool, { name: uniqueName("ud") }));
    const ok = await pool.request({ path: "/x", method: "GET" });
    expect(await ok.body.text()).toBe("hello /x");
    const boom = await pool.request({ path: "/boom", method: "GET" });
    expect(boom.statusCode).toBe(500);
    expect(await boom.body.text()).toBe("boom");
    await pool.close();
    // A port nothing listens on: the connection is refused before the request is written.
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const deadUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((r) => closed.close(r));
    const dead = new Pool(deadUrl, { connections: 1 });
    const hd = tracked(instrument(dead, { name: uniqueName("ud") }));
    const err = (await rejectionOf(dead.request({ path: "/", method: "GET" }))) as NodeJS.ErrnoException;
    expect(err.code).toBe("ECONNREFUSED");
    expect(hd.sample(Date.now())).toMatchObject({ acquired: 0, released: 0, inUse: 0 });
    expect(h.sample(Date.now())).toMatchObject({ acquired: 2, released: 2 });
    await dead.close();
  });

  it("an abort while waiting for a connection counts as an abort; a request to a closed pool as a rejection", async () => {
    const pool = new Pool(url, { connections: 1 });
    const h = tracked(instrument(pool, { name: uniqueName("ud") }));
    const first = pool.request({ path: "/gate-abort", method: "GET" });
    await until(() => gates.length === 1, "the first request at the server");
    const ac = new AbortController();
    const queued = pool.request({ path: "/never", method: "GET", signal: ac.signal });
    expect(h.snapshot().waiters).toBe(1);
    ac.abort();
    // undici drops an aborted request when a connection picks it up, without writing it.
    openGates();
    await (await first).body.text();
    const aborted = (await rejectionOf(queued)) as Error;
    expect(aborted.name).toBe("AbortError");
    await pool.close();
    const refused = (await rejectionOf(pool.request({ path: "/", method: "GET" }))) as { code?: string };
    expect(refused.code).toBe("UND_ERR_DESTROYED");
    expect(h.sample(Date.now())).toMatchObject({ acquired: 1, released: 1, aborts: 1, rejections: 1 });
    expect(seen).not.toContain("/never");
  });

  it("an Agent is one semaphore over its per-origin pools: the cap grows with the origins it has open", async () => {
    const agent = new Agent({ connections: 2 });
    const h = tracked(instrument(agent, { name: uniqueName("ud") }));
    expect(h.describe()).toMatchObject({ kind: "undici-agent", cap: 2 });
    const a = [1, 2, 3].map((i) => request(`${url}/gate-a${i}`, { dispatcher: agent }).then((r) => r.body.text()));
    const b = request(`${url2}/gate-b`, { dispatcher: agent }).then((r) => r.body.text());
    await until(() => gates.length === 3, "3 requests at the server");
    expect(h.snapshot()).toMatchObject({ cap: 4, inUse: 3, waiters: 1 });
    for (let answered = 0; answered < 4; ) {
      await until(() => gates.length > 0, "a request at the server");
      answered += gates.length;
      openGates();
    }
    await Promise.all([...a, b]);
    expect(h.sample(Date.now())).toMatchObject({ acquired: 4, released: 4, inUse: 0 });
    await agent.close();
  });

  it("untrack() puts the prototype's dispatch back by identity; requests after it are not seen", async () => {
    const pool = new Pool(url, { connections: 1 });
    const h = instrument(pool, { name: uniqueName("ud") });
    expect(Object.prototype.hasOwnProperty.call(pool, "dispatch")).toBe(true);
    h.untrack();
    expect(Object.prototype.hasOwnProperty.call(pool, "dispatch")).toBe(false);
    expect(pool.dispatch).toBe(Pool.prototype.dispatch);
    await (await pool.request({ path: "/after", method: "GET" })).body.text();
    expect(h.counters().acquired).toBe(0);
    await pool.close();
  });

  it("refuses a pool without a connection limit unless given permits, and a Client, saying why", async () => {
    const unlimited = new Pool(url);
    expect(thrownBy(() => instrument(unlimited, { name: uniqueName("ud") }))).toBeInstanceOf(SemscopeAdapterError);
    expect(() => instrument(unlimited, { name: uniqueName("ud") })).toThrow(/connections is unlimited.*pass permits/);
    const h = tracked(instrument(unlimited, { name: uniqueName("ud"), permits: 16 }));
    expect(h.describe().cap).toBe(16);
    const limited = new Pool(url, { connections: 3 });
    expect(() => instrument(limited, { name: uniqueName("ud"), permits: 16 })).toThrow(/permits is for a pool without a connection limit; this one has connections: 3/);
    const { Client } = await import("undici");
    expect(() => instrument(new Client(url), { name: uniqueName("ud") })).toThrow(/not a Pool or an Agent/);
    await Promise.all([unlimited.close(), limited.close()]);
  });
});
