// The hub's alerts in a real Alertmanager (Debian's, on a free port) and a webhook receiver, from
// real agent processes: a leak arrives with its labels, its acquisition stack and a link to the
// dashboard soon after it is raised, an acknowledgement follows, and the release resolves it; an
// Alertmanager stopped and started again mid-incident ends up with every active alert.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createHub } from "../../../main/hub/index.js";
import type { WebhookBody, WebhookEvent } from "../../../main/hub/forwarding/alert-payloads.js";
import { parseRoute } from "../../../renderer/src/logic/route.js";
import { startAlertmanager, type AlertmanagerServer, type AmAlert } from "../../../scripts/support/alertmanager.js";
import type { Alert } from "../../../shared/protocol/index.js";
import { alertsOf, cleanupAll, onCleanup, startHubCli, startService, until } from "../stream/harness.js";

/** The bound from raised (as the hub's API shows it) to present in Alertmanager. */
const DELIVERY_MS = 2000;
/** Liveness on a loaded machine: an agent's leak threshold, its sample, the hub's rule. */
const LIVENESS_MS = 15_000;
const DASHBOARD = "http://127.0.0.1:7420";

afterEach(cleanupAll);

async function alertmanager(): Promise<AlertmanagerServer> {
  const am = await startAlertmanager();
  onCleanup(() => am.stop());
  return am;
}

/** A webhook receiver on a free port: every body it was sent, in arrival order. */
async function webhookReceiver(): Promise<{ url: string; bodies: WebhookBody[] }> {
  const bodies: WebhookBody[] = [];
  const read = (req: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let text = "";
      req.on("data", (d: Buffer) => (text += d.toString()));
      req.on("end", () => resolve(text));
    });
  const server = createServer((req, res) => {
    void read(req).then((text) => {
      bodies.push(JSON.parse(text) as WebhookBody);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  onCleanup(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, bodies };
}

const amAlert = (alerts: AmAlert[], name: string, semaphore: string) => alerts.find((a) => a.labels.alertname === name && a.labels.semaphore === semaphore);

describe("alert forwarding to Alertmanager and webhooks", () => {
  it("sends a real agent's leak with labels, stack and link within 2 s, then its acknowledgement and its resolution", async () => {
    const am = await alertmanager();
    const hook = await webhookReceiver();
    const hub = await startHubCli(0, ["--alertmanager", am.url, "--webhook", hook.url, "--dashboard-url", DASHBOARD]);
    const svc = await startService({ url: hub.url, service: "shop", instance: "web-1", intervalMs: 250, leakThresholdMs: 500, scenarios: ["leak"] });

    await svc.ask({ cmd: "leak:hold" }, "leak:held");
    const leak = await until(async () => (await alertsOf(hub.url)).find((a) => a.rule === "leak" && a.resolvedAt === null), "the hub's leak alert", LIVENESS_MS);
    const seenAt = Date.now();
    const sent = await until(async () => amAlert(await am.alerts(), "leak", "leaky"), "the leak in Alertmanager", LIVENESS_MS);
    expect(Date.now() - seenAt).toBeLessThan(DELIVERY_MS);

    expect(sent.labels).toEqual({ alertname: "leak", severity: "critical", service: "shop", instance: "web-1", semaphore: "leaky", source: "semscope" });
    expect(sent.status.state).toBe("active");
    expect(sent.annotations.summary).toBe(leak.message.split("\n")[0]);
    expect(sent.annotations.alert_id).toBe(leak.id);
    expect(sent.annotations.acknowledged).toBe("false");
    // The acquisition stack names the function that took the permit and never gave it back.
    expect(sent.annotations.description).toContain("holdPermitAndForgetIt");
    expect(new Date(sent.startsAt).getTime()).toBe(leak.raisedAt);
    expect(new Date(sent.endsAt).getTime()).toBeGreaterThan(Date.now());
    // The link opens the dashboard on that semaphore at the moment the alert was raised.
    expect(sent.generatorURL).toBe(sent.annotations.dashboard);
    const link = new URL(sent.generatorURL ?? "");
    expect(link.origin).toBe(DASHBOARD);
    expect(parseRoute(link.hash)).toEqual({ view: "semaphore", key: leak.key, window: "5m", at: leak.raisedAt });

    const ack = await fetch(`${hub.url}/api/alerts/${encodeURIComponent(leak.id)}/ack`, { method: "POST" });
    expect(ack.status).toBe(200);
    await until(async () => amAlert(await am.alerts(), "leak", "leaky")?.annotations.acknowledged === "true", "the acknowledgement in Alertmanager", LIVENESS_MS);

    await svc.ask({ cmd: "leak:release" }, "leak:released");
    await until(async () => (await alertsOf(hub.url)).find((a) => a.id === leak.id)?.resolvedAt !== null, "the hub resolving the leak", LIVENESS_MS);
    await until(async () => amAlert(await am.alerts(), "leak", "leaky") === undefined, "the leak resolved in Alertmanager", LIVENESS_MS);

    // The webhook saw the same story, in order, in the documented shape.
    const events = () => hook.bodies.flatMap((b) => b.events).filter((e) => e.alert.id === leak.id);
    await until(() => events().some((e) => e.kind === "resolved"), "the webhook's resolve", LIVENESS_MS);
    expect(hook.bodies.every((b) => b.version === 1 && b.source === "semscope")).toBe(true);
    const kinds = events().map((e) => e.kind);
    expect(kinds[0]).toBe("raised");
    expect(kinds.at(-1)).toBe("resolved");
    expect(kinds.slice(1, -1).every((k) => k === "updated")).toBe(true);
    const acked = events().find((e: WebhookEvent) => e.alert.acknowledged);
    expect(acked?.kind).toBe("updated");
    expect(events()[0].alert.detail).toContain("holdPermitAndForgetIt");
    expect(events()[0].alert.dashboard).toBe(sent.generatorURL);
    expect(events().map((e) => e.at)).toEqual([...events().map((e) => e.at)].sort((a, b) => a - b));
  }, 60_000);

  it("loses nothing when Alertmanager is stopped and started again mid-incident", async () => {
    const am = await alertmanager();
    const hub = await createHub({
      port: 0,
      log: () => undefined,
      alertForwarding: { alertmanager: [am.url], retry: { initialMs: 100, maxMs: 400 } },
    });
    onCleanup(() => hub.close());
    const svc = await startService({ url: hub.url, service: "shop", instance: "web-2", intervalMs: 250, leakThresholdMs: 500, scenarios: ["leak", "double", "convoy"] });
    const active = async (rule: Alert["rule"]) => (await alertsOf(hub.url)).find((a) => a.rule === rule && a.resolvedAt === null);

    await svc.ask({ cmd: "leak:hold" }, "leak:held");
    await svc.ask({ cmd: "double" }, "double:done");
    const leak = await until(() => active("leak"), "the leak", LIVENESS_MS);
    await until(() => active("double_release"), "the double release", LIVENESS_MS);
    await until(async () => {
      const alerts = await am.alerts();
      return amAlert(alerts, "leak", "leaky") !== undefined && amAlert(alerts, "double_release", "twice") !== undefined;
    }, "both in Alertmanager", LIVENESS_MS);

    // Down: Alertmanager forgets every alert it had. Meanwhile the leak is acknowledged and a
    // convoy starts; the double release does not change.
    await am.stop();
    expect((await fetch(`${hub.url}/api/alerts/${encodeURIComponent(leak.id)}/ack`, { method: "POST" })).status).toBe(200);
    await svc.ask({ cmd: "convoy:start" }, "convoy:started");
    await until(() => active("convoy"), "the convoy", LIVENESS_MS);
    await until(async () => {
      const res = await fetch(`${hub.url}/api/stats`);
      const stats = (await res.json()) as { alertForwarding: { alertmanager: { failures: number }[] } };
      return stats.alertForwarding.alertmanager[0].failures > 0;
    }, "a failed delivery while Alertmanager is down", LIVENESS_MS);

    await am.start();
    const back = await until(async () => {
      const alerts = await am.alerts();
      const l = amAlert(alerts, "leak", "leaky");
      const d = amAlert(alerts, "double_release", "twice");
      const c = amAlert(alerts, "convoy", "narrow");
      return l !== undefined && d !== undefined && c !== undefined ? { l, d, c } : undefined;
    }, "every active alert in the restarted Alertmanager", LIVENESS_MS);
    expect(back.l.annotations.acknowledged).toBe("true");
    expect(back.d.labels).toMatchObject({ alertname: "double_release", service: "shop", instance: "web-2" });
    await svc.ask({ cmd: "convoy:stop" }, "convoy:stopped");

    const res = await fetch(`${hub.url}/api/stats`);
    const stats = (await res.json()) as { alertForwarding: { alertmanager: { dropped: number; waiting: number; lastError: string | null }[] } };
    expect(stats.alertForwarding.alertmanager[0]).toMatchObject({ dropped: 0, lastError: null });
  }, 60_000);
});
