// Alert forwarding's own promises, against a real HTTP receiver that can refuse: what Alertmanager
// is sent for each kind of alert, the order and bound of what waits while a destination is down,
// and the hub refusing destinations it could never reach.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { AlertForwarder } from "../../../main/hub/forwarding/alert-forwarder.js";
import { toAlertmanager, type WebhookBody } from "../../../main/hub/forwarding/alert-payloads.js";
import { createHub, HubConfigError } from "../../../main/hub/index.js";
import { parseRoute } from "../../../renderer/src/logic/route.js";
import type { AlertChange } from "../../../shared/alerts/index.js";
import type { Alert } from "../../../shared/protocol/index.js";
import { makeInfo } from "../../fixtures/protocol.js";
import { agent, request, type AckAnswer } from "./helpers.js";

const T0 = 1_800_000_000_000;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

function alert(over: Partial<Alert> = {}): Alert {
  return {
    id: "a1",
    rule: "leak",
    severity: "critical",
    key: "shop/web-1/db",
    service: "shop",
    instance: "web-1",
    semaphore: "db",
    message: "db: 2 permits held past 10 s\nsecond line",
    raisedAt: T0,
    resolvedAt: null,
    acknowledged: false,
    ...over,
  };
}

/** A receiver that answers 503 while `down`, else 200, and keeps what it accepted. */
async function receiver() {
  const state = { down: false, accepted: [] as unknown[], refused: 0 };
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (d: Buffer) => (text += d.toString()));
    req.on("end", () => {
      if (state.down) {
        state.refused++;
        res.writeHead(503).end("down");
        return;
      }
      state.accepted.push(JSON.parse(text));
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
  return Object.assign(state, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
}

const until = async (cond: () => boolean, what: string) => {
  const end = Date.now() + 5000;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

function forwarder(opts: ConstructorParameters<typeof AlertForwarder>[0]) {
  const f = new AlertForwarder({ retry: { initialMs: 20, maxMs: 50 }, ...opts }, () => T0 + 5000, () => "http://dash:7420/");
  cleanups.push(() => f.close(100));
  return f;
}

const change = (kind: AlertChange["kind"], a: Alert): AlertChange => ({ kind, alert: a });

describe("what Alertmanager is sent", () => {
  it("labels an alert by rule and target, and says when an active or resolved one ends", () => {
    const active = toAlertmanager(alert(), T0 + 240_000, "http://dash:7420");
    expect(active.labels).toEqual({ alertname: "leak", severity: "critical", service: "shop", instance: "web-1", semaphore: "db", source: "semscope" });
    expect(active.annotations).toMatchObject({ summary: "db: 2 permits held past 10 s", description: "second line", acknowledged: "false", alert_id: "a1" });
    expect(active.startsAt).toBe(new Date(T0).toISOString());
    expect(active.endsAt).toBe(new Date(T0 + 240_000).toISOString());
    const resolved = toAlertmanager(alert({ resolvedAt: T0 + 9000 }), T0 + 240_000, null);
    expect(resolved.endsAt).toBe(new Date(T0 + 9000).toISOString());
    expect(resolved.generatorURL).toBeUndefined();
    // An agent's clock ahead of the hub's: Alertmanager refuses an end before the start.
    const ahead = toAlertmanager(alert({ raisedAt: T0 + 600_000 }), T0 + 240_000, null);
    expect(Date.parse(ahead.endsAt)).toBeGreaterThan(Date.parse(ahead.startsAt));
  });

  it("links each alert to the dashboard view of what it is about, and trims its evidence", () => {
    const route = (a: Alert) => parseRoute(new URL(toAlertmanager(a, T0, "http://dash:7420/").generatorURL ?? "").hash);
    expect(route(alert())).toEqual({ view: "semaphore", key: "shop/web-1/db", window: "5m", at: T0 });
    const fleet = alert({ rule: "over_budget", severity: "warning", key: "shop/db", instance: undefined });
    expect(route(fleet)).toEqual({ view: "fleet", service: "shop", name: "db", window: "5m", at: T0 });
    expect(toAlertmanager(fleet, T0, null).labels).not.toHaveProperty("instance");
    const down = alert({ id: "x/y", rule: "agent_down", severity: "warning", key: "shop/web-1", semaphore: undefined });
    expect(route(down)).toEqual({ view: "alerts", id: "x/y" });
    const stack = `Error\n${"    at somewhere (file.ts:1:1)\n".repeat(500)}`;
    const withStack = toAlertmanager(alert({ evidence: { holders: [{ holderId: 1, t: T0, stack }] } }), T0, null);
    expect(withStack.annotations.description?.length).toBeLessThanOrEqual(2000 + "second line\n\n".length);
    expect(withStack.annotations.description).toContain("acquired at:\nError");
    const diagnosed = toAlertmanager(alert({ rule: "convoy", evidence: { diagnosis: { headline: "N is too tight", detail: "Little's law", fix: "raise N to 8" } } }), T0, null);
    expect(diagnosed.annotations.description).toContain("N is too tight\nLittle's law\nraise N to 8");
  });
});

describe("delivery while a destination is down", () => {
  it("a webhook gets every event, in order, once it is back", async () => {
    const r = await receiver();
    r.down = true;
    const f = forwarder({ webhooks: [`${r.url}/hook`] });
    f.onChanges([change("raised", alert())]);
    f.onChanges([change("raised", alert({ id: "a2", semaphore: "cache" }))]);
    await until(() => r.refused >= 2, "two refusals");
    f.onChanges([change("resolved", alert({ resolvedAt: T0 + 1 }))]);
    r.down = false;
    await until(() => f.stats().webhooks[0].waiting === 0, "the queue drained");
    const events = (r.accepted as WebhookBody[]).flatMap((b) => b.events);
    expect(events.map((e) => [e.kind, e.alert.id])).toEqual([["raised", "a1"], ["raised", "a2"], ["resolved", "a1"]]);
    expect(f.stats().webhooks[0]).toMatchObject({ dropped: 0, lastError: null });
    expect(f.stats().webhooks[0].failures).toBeGreaterThanOrEqual(2);
  });

  it("a webhook holds at most maxWaiting events, dropping the oldest and counting them; an update replaces the update before it", async () => {
    const r = await receiver();
    r.down = true;
    const f = forwarder({ webhooks: [r.url], maxWaiting: 3 });
    for (let i = 1; i <= 5; i++) f.onChanges([change("raised", alert({ id: `a${i}` }))]);
    f.onChanges([change("updated", alert({ id: "a5", message: "first" }))]);
    f.onChanges([change("updated", alert({ id: "a5", message: "second" }))]);
    expect(f.stats().webhooks[0]).toMatchObject({ waiting: 3, dropped: 3 });
    r.down = false;
    await until(() => f.stats().webhooks[0].waiting === 0, "the queue drained");
    const events = (r.accepted as WebhookBody[]).flatMap((b) => b.events);
    expect(events.map((e) => [e.kind, e.alert.id, e.alert.message])).toEqual([
      ["raised", "a4", alert().message],
      ["raised", "a5", alert().message],
      ["updated", "a5", "second"],
    ]);
  });

  it("Alertmanager gets the latest state of each alert, at most maxWaiting alerts of them", async () => {
    const r = await receiver();
    r.down = true;
    const f = forwarder({ alertmanager: [r.url], maxWaiting: 2 });
    f.onChanges([change("raised", alert({ id: "a1" })), change("raised", alert({ id: "a2", semaphore: "s2" }))]);
    f.onChanges([change("updated", alert({ id: "a1", acknowledged: true }))]);
    f.onChanges([change("raised", alert({ id: "a3", semaphore: "s3" }))]);
    expect(f.stats().alertmanager[0]).toMatchObject({ waiting: 2, dropped: 1 });
    r.down = false;
    await until(() => f.stats().alertmanager[0].waiting === 0 && r.accepted.length > 0, "delivered");
    const sent = (r.accepted as { annotations: Record<string, string> }[][]).flat();
    // a2 was the oldest waiting when a3 came; a1's acknowledgement had made it the newer.
    expect(sent.map((a) => [a.annotations.alert_id, a.annotations.acknowledged])).toEqual([["a1", "true"], ["a3", "false"]]);
  });
});

describe("the hub's own account of forwarding", () => {
  it("counts failed deliveries and what waits in /api/stats and /metrics, per destination", async () => {
    const r = await receiver();
    r.down = true;
    const hub = await createHub({ port: 0, log: () => undefined, alertForwarding: { alertmanager: [r.url], retry: { initialMs: 20, maxMs: 50 } } });
    cleanups.push(() => hub.close());
    const socket = await agent(hub, "agent-1", [makeInfo("db", { leakThresholdMs: 1000 })]);
    cleanups.push(async () => void socket.disconnect());
    const ack = await request<AckAnswer>(socket, "events", { items: [{ t: Date.now(), id: "db", type: "leak_suspected", holderId: "h1", heldMs: 5000 }] });
    expect(ack.ok).toBe(true);
    await until(() => r.refused >= 2, "two refused deliveries");
    const stats = (await (await fetch(`${hub.url}/api/stats`)).json()) as { alertForwarding: { alertmanager: { url: string; failures: number; waiting: number; lastError: string }[] } };
    const am = stats.alertForwarding.alertmanager[0];
    expect(am).toMatchObject({ url: r.url, waiting: 1 });
    expect(am.failures).toBeGreaterThanOrEqual(2);
    expect(am.lastError).toMatch(/HTTP 503/);
    const text = await (await fetch(`${hub.url}/metrics`)).text();
    const labels = `destination="alertmanager",url="${r.url}"`;
    const failures = text.split("\n").find((l) => l.startsWith(`semscope_hub_alert_forwarding_failures_total{${labels}} `));
    expect(Number(failures?.split(" ")[1])).toBeGreaterThanOrEqual(2);
    expect(text).toContain(`semscope_hub_alert_forwarding_waiting{${labels}} 1`);
    expect(text).toContain(`semscope_hub_alert_forwarding_dropped_total{${labels}} 0`);
    r.down = false;
    await until(() => r.accepted.length > 0, "the delivery once the receiver is back");
  });
});

describe("the hub's options", () => {
  it("refuses a destination that is not an http(s) URL, naming it", async () => {
    await expect(createHub({ port: 0, alertForwarding: { alertmanager: ["ftp://am:9093"] } })).rejects.toThrow(HubConfigError);
    await expect(createHub({ port: 0, alertForwarding: { webhooks: ["not a url"] } })).rejects.toThrow(/webhook: not a URL: "not a url"/);
    await expect(createHub({ port: 0, alertForwarding: { alertmanager: ["http://am:9093"], resendMs: 5 } })).rejects.toThrow(/resendMs/);
  });
});
