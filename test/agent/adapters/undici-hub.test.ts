// undici's Pool under instrument() in a service child process, on a real HTTP server this file
// starts, streamed by the real agent to a real hub (createHub): the pool's requests in flight and
// queued as /api/state shows them while the server holds the answers, a response body never read
// raising `leak` at the line that made the request (and resolved once it is read), and callers
// queueing behind a pool too small for them raising `convoy` (resolved once they stop).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Alert, ApiHubState } from "../../../shared/protocol/index.js";
import { cleanupAll, getJson, startHub, waitUntil } from "../../main/hub/helpers.js";
import { firstUserFrame } from "../semantic-suite.js";
import { until } from "./helpers.js";
import { killServices, startService } from "./service-child.js";

const FIXTURE = fileURLToPath(new URL("./fixtures/undici-service.ts", import.meta.url));
const KEY = (instance: string) => `http-svc/${instance}/http`;

type Msg =
  | { type: "answered"; bodies: string[] }
  | { type: "leaked"; at: { file: string; line: number }; statusCode: number }
  | { type: "read"; bytes: number }
  | { type: "stopped"; served: number };

/** Larger than a response stream's buffer: unread, it keeps the socket paused and the request running. */
const BIG = Buffer.alloc(1 << 20, 120);

let server: Server;
let origin: string;
const gates: ServerResponse[] = [];

function route(req: IncomingMessage, res: ServerResponse): void {
  if (req.url?.startsWith("/gate/")) gates.push(res);
  else if (req.url === "/big") res.end(BIG);
  else if (req.url === "/slow") setTimeout(() => res.end("slow"), 200);
  else {
    res.writeHead(404);
    res.end();
  }
}

beforeAll(async () => {
  server = createServer(route);
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});
// The service first, so its agent does not see the hub go away.
afterEach(async () => {
  await killServices();
  gates.splice(0);
  await cleanupAll();
});

type Hub = Awaited<ReturnType<typeof startHub>>;

async function semaphore(hub: Hub, key: string): Promise<ApiHubState["semaphores"][number] | undefined> {
  return (await getJson<ApiHubState>(hub, "/api/state")).body.semaphores.find((s) => s.key === key);
}

/** Polls /api/state until the semaphore's gauges are `want` (the last ones seen are in the timeout's message). */
async function gaugesBecome(hub: Hub, key: string, want: { inUse: number; waiters: number }): Promise<void> {
  let seen: unknown;
  await waitUntil(
    async () => {
      const s = await semaphore(hub, key);
      seen = s && { cap: s.cap, inUse: s.inUse, waiters: s.waiters };
      return s !== undefined && s.inUse === want.inUse && s.waiters === want.waiters;
    },
    `${key} at ${JSON.stringify(want)} on /api/state`,
    15_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; last seen ${JSON.stringify(seen)}`);
  });
}

/** The alert of `rule` on `key` as GET /api/alerts lists it (active and resolved), once it is there and `done` holds. */
async function alertOn(hub: Hub, rule: string, key: string, what: string, done: (a: Alert) => boolean = () => true): Promise<Alert> {
  let found: Alert | undefined;
  await waitUntil(
    async () => {
      found = (await getJson<{ alerts: Alert[] }>(hub, "/api/alerts")).body.alerts.find((a) => a.rule === rule && a.key === key);
      return found !== undefined && done(found);
    },
    what,
    30_000,
  );
  return found as Alert;
}

describe("undici Pool adapter through a real hub", () => {
  it("shows the pool's requests in flight and queued on /api/state as the server answers them", async () => {
    const hub = await startHub();
    const svc = startService<Msg>(FIXTURE, { ORIGIN: origin, HUB_URL: hub.url, SCENARIO: "load", INSTANCE: "u-load" });
    const key = KEY("u-load");
    // 5 requests on 2 connections: 2 at the server, 3 queued in the pool.
    await gaugesBecome(hub, key, { inUse: 2, waiters: 3 });
    expect(gates).toHaveLength(2);
    expect(await semaphore(hub, key)).toMatchObject({ kind: "undici-pool", cap: 2, available: 0 });
    // One answered: its connection takes the next queued request.
    gates.shift()?.end("opened");
    await gaugesBecome(hub, key, { inUse: 2, waiters: 2 });
    await until(() => gates.length === 2, "the next request at the server");
    // The rest answered as they arrive.
    const answering = setInterval(() => gates.splice(0).forEach((res) => res.end("opened")), 10);
    try {
      expect((await svc.next("answered", 15_000)) as Msg).toEqual({ type: "answered", bodies: ["opened", "opened", "opened", "opened", "opened"] });
    } finally {
      clearInterval(answering);
    }
    await gaugesBecome(hub, key, { inUse: 0, waiters: 0 });
    expect(hub.state().alerts.filter((a) => a.key === key)).toEqual([]);
  }, 60_000);

  it("a response body never read raises `leak` naming the line that made the request, resolved once the body is read", async () => {
    const hub = await startHub();
    const svc = startService<Msg>(FIXTURE, { ORIGIN: origin, HUB_URL: hub.url, SCENARIO: "leak", INSTANCE: "u-leak" });
    const key = KEY("u-leak");
    const leaked = (await svc.next("leaked", 30_000)) as Extract<Msg, { type: "leaked" }>;
    expect(leaked.statusCode).toBe(200);
    expect(leaked.at.file).toBe(FIXTURE);
    const leak = await alertOn(hub, "leak", key, "a leak alert on the hub");
    const holders = (leak.evidence as { holders: { stack?: string }[] }).holders;
    expect(holders).toHaveLength(1);
    expect(firstUserFrame(holders[0].stack)).toEqual(leaked.at);
    expect(await semaphore(hub, key)).toMatchObject({ inUse: 1, waiters: 0, status: "leak" });

    svc.send({ cmd: "read" });
    expect(await svc.next("read", 10_000)).toEqual({ type: "read", bytes: BIG.length });
    await alertOn(hub, "leak", key, "the leak alert resolved", (a) => a.id === leak.id && a.resolvedAt !== null);
    await gaugesBecome(hub, key, { inUse: 0, waiters: 0 });
  }, 60_000);

  it("callers queueing behind a pool too small for them raise `convoy`, resolved once they stop", async () => {
    const hub = await startHub();
    const svc = startService<Msg>(FIXTURE, { ORIGIN: origin, HUB_URL: hub.url, SCENARIO: "convoy", INSTANCE: "u-convoy" });
    const key = KEY("u-convoy");
    // 10 callers on 2 connections: each waits for about four others' requests of 200 ms.
    const convoy = await alertOn(hub, "convoy", key, "a convoy alert on the hub");
    expect(convoy.resolvedAt).toBeNull();
    const s = await semaphore(hub, key);
    expect(s).toMatchObject({ cap: 2, inUse: 2, status: "convoy" });
    expect(s?.waiters).toBeGreaterThanOrEqual(1);

    svc.send({ cmd: "stop" });
    const stopped = (await svc.next("stopped", 10_000)) as Extract<Msg, { type: "stopped" }>;
    expect(stopped.served).toBeGreaterThan(20);
    await alertOn(hub, "convoy", key, "the convoy alert resolved", (a) => a.id === convoy.id && a.resolvedAt !== null);
  }, 60_000);

  it("a convoy whose pool idles for a moment every few seconds still raises `convoy`, through the dips", async () => {
    const hub = await startHub();
    const svc = startService<Msg>(FIXTURE, { ORIGIN: origin, HUB_URL: hub.url, SCENARIO: "dipping-convoy", INSTANCE: "u-dips" });
    const key = KEY("u-dips");
    // Never 5 s in a row of samples in convoy: the window's share of them is what raises it.
    const convoy = await alertOn(hub, "convoy", key, "a convoy alert on the hub");
    const window = (convoy.evidence as { window: { coveredMs: number; heldMs: number } }).window;
    expect(window.heldMs).toBeLessThan(window.coveredMs);
    expect(window.heldMs).toBeGreaterThanOrEqual(0.8 * window.coveredMs);
    svc.send({ cmd: "stop" });
    await svc.next("stopped", 10_000);
    await alertOn(hub, "convoy", key, "the convoy alert resolved", (a) => a.id === convoy.id && a.resolvedAt !== null);
  }, 60_000);
});
