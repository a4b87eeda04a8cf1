// The app shows it: in Chromium (web mode) against a real hub, a real agent whose permit never
// comes back, and a recorded "N too tight" stream. Under the leak alert: the flight recorder's
// timeline and the permit that never came back, with the code that took it; under the convoy
// alert: the diagnosis, naming the N Little's law asks for.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, expect, it } from "vitest";
import type { Diagnosis } from "../../../../shared/diagnosis/index.js";
import type { Alert } from "../../../../shared/protocol/index.js";
import { buildRenderer, launchBrowser, until } from "../../../e2e/browser.js";
import { drawParams, simulate } from "../../../shared/diagnosis/simulate.js";
import { agent, cleanupAll, getJson, info, onCleanup, request, startHub, waitUntil, type AckAnswer } from "../helpers.js";

const ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
const FIXTURE = fileURLToPath(new URL("../fixtures/flight-service.ts", import.meta.url));

afterEach(cleanupAll);

it("shows the ring under the leak alert and the diagnosis under the convoy alert", async () => {
  const built = await buildRenderer();
  onCleanup(built.remove);
  const hub = await startHub({ staticDir: built.dir });

  // The leak, from a real agent.
  const child = fork(FIXTURE, [], { cwd: ROOT, execArgv: ["--import", "tsx"], env: { ...process.env, HUB_URL: hub.url }, stdio: ["ignore", "inherit", "inherit", "ipc"] });
  onCleanup(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  const said: string[] = [];
  child.on("message", (m) => said.push((m as { type: string; cmd?: string }).cmd ?? (m as { type: string }).type));
  await waitUntil(() => said.includes("ready"), "the agent to connect", 30_000);
  child.send({ cmd: "work" });
  await waitUntil(() => said.includes("work"), "ordinary work", 30_000);
  child.send({ cmd: "leak" });

  // The convoy, from a recorded stream.
  const params = drawParams("tight", 2);
  const s = await agent(hub, "sim-agent", [info("db", { cap: params.permits })], { service: "shop", instance: "web-1" });
  for (const [seq, { t, sample }] of simulate(params, 2).samples.entries()) {
    const ack = await request<AckAnswer>(s, "samples", { seq, t, intervalMs: 1000, items: [sample] });
    expect(ack.ok).toBe(true);
  }
  let convoy: Alert | undefined;
  await waitUntil(async () => {
    const alerts = (await getJson<{ alerts: Alert[] }>(hub, "/api/alerts")).body.alerts;
    convoy = alerts.find((a) => a.rule === "convoy");
    return alerts.some((a) => a.rule === "leak" && a.evidence?.flight !== undefined) && convoy !== undefined;
  }, "both alerts, the leak with its ring", 15_000);
  const diagnosis = convoy?.evidence?.diagnosis as Diagnosis;

  const browser = await launchBrowser();
  onCleanup(() => browser.close());
  const page = browser.page;
  await page.goto(hub.url);
  await page.getByTestId("alerts-tab").click();
  await page.getByTestId("alerts").waitFor();

  await page.locator(".alert-item", { hasText: "flights / svc-1" }).filter({ hasText: "Leak" }).click();
  const flight = page.getByTestId("flight");
  await flight.waitFor({ timeout: 10_000 });
  expect(await flight.locator("svg.flight-bars rect.flight-grants").count()).toBeGreaterThan(0);
  expect(await flight.textContent()).toContain("Permits that never came back (1)");
  const holder = flight.getByTestId("flight-holder");
  expect(await holder.count()).toBe(1);
  expect(await holder.locator("pre.stack").textContent()).toContain("takePermitAndNeverGiveItBack");

  await page.locator(".alert-item", { hasText: "shop / web-1" }).filter({ hasText: "Convoy" }).click();
  const d = page.getByTestId("diagnosis");
  await until("the diagnosis", () => d.getAttribute("data-cause"), (c) => c === "cap_too_tight", 10_000);
  expect(await d.getByTestId("needed-n").textContent()).toBe(String(diagnosis.numbers.neededN));
  expect(await d.textContent()).toContain(diagnosis.headline);
  // What these views could break is rendering: no page error. (A resource answered 400 now and
  // then under load, a socket.io polling request racing its upgrade, is not theirs.)
  expect(browser.errors.filter((e) => !e.startsWith("Failed to load resource"))).toEqual([]);
}, 180_000);
