// Replay in a real browser: a recording made by a scripted scenario (real agents in child
// processes against a recording hub) opens in the same dashboard in replay mode: the banner, the
// alerts on the timeline, the scrubber back to before them, "next alert" to the leak, the alert
// with its evidence, the flight recorder's timeline and the convoy's diagnosis as the live view
// had them; a recording cut short opens up to the damage with the message saying where.
import { copyFileSync, existsSync, mkdtempSync, statSync, truncateSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHub } from "../../../main/hub/index.js";
import { createReplayHub, type ReplayHub } from "../../../main/hub/recording/replay-hub.js";
import { ReplaySession } from "../../../main/hub/recording/replay-session.js";
import type { Alert } from "../../../shared/protocol/index.js";
import { buildRenderer, launchBrowser, spawnAgent, until, type Browser, type ChildAgent } from "../browser.js";

const FIXTURE = join(import.meta.dirname, "fixtures/ui-agent.ts");

/** A recording of a leak and a convoy, made by a real hub with real agents; returns the file and the live alerts. */
async function record(dir: string): Promise<{ file: string; live: Alert[] }> {
  const file = join(dir, "scenario.ndjson.gz");
  const hub = await createHub({ port: 0, record: file, log: () => undefined });
  const agents: ChildAgent[] = [spawnAgent(FIXTURE, [hub.url, "leak", "inventory", "inv-1"]), spawnAgent(FIXTURE, [hub.url, "convoy", "payments", "pay-1"])];
  try {
    await Promise.all(agents.map((a) => a.waitFor("ready")));
    const leakWithRing = () => hub.engine.allAlerts().some((a) => a.rule === "leak" && a.evidence?.flight !== undefined);
    await until("the leak alert with its flight recorder ring", leakWithRing, (ok) => ok, 20_000);
    const convoyDiagnosed = () => hub.engine.allAlerts().some((a) => a.rule === "convoy" && a.evidence?.diagnosis !== undefined);
    await until("the convoy alert with its diagnosis", convoyDiagnosed, (ok) => ok, 20_000);
    const t = Date.now();
    await until("a few seconds more", () => Date.now() - t, (ms) => ms > 3000, 10_000);
  } finally {
    await Promise.all(agents.map((a) => a.kill()));
  }
  await until("the agents' disconnects", () => hub.state().agents.every((a) => !a.connected), (ok) => ok, 10_000);
  const live = hub.engine.allAlerts();
  await hub.close();
  return { file, live };
}

type StoreView = { __semscope: { store: { alertList(): Alert[] } } };

const PAGE_ZONE = "Asia/Kolkata";
/** "2026-03-04 14:03:27 UTC", as the replay bar says a time. */
const utc = (t: number): string => new Date(t).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
/** "14:03:27" in UTC. */
const utcClock = (t: number): string => new Date(t).toISOString().slice(11, 19);

describe("replay in the browser", () => {
  let browser: Browser;
  let page: Page;
  let replay: ReplayHub;
  let cut: ReplayHub;
  let live: Alert[];
  let saveDir: string;
  let removeBuild: (() => void) | undefined;

  beforeAll(async () => {
    const built = await buildRenderer();
    removeBuild = built.remove;
    const dir = mkdtempSync(join(tmpdir(), "semscope-replay-ui-"));
    const rec = await record(dir);
    live = rec.live;
    saveDir = join(dir, "saved");
    replay = await createReplayHub({ file: rec.file, port: 0, staticDir: built.dir, log: () => undefined, saveDir });
    const cutFile = join(dir, "cut.ndjson.gz");
    copyFileSync(rec.file, cutFile);
    truncateSync(cutFile, Math.floor(statSync(cutFile).size * 0.7));
    cut = await createReplayHub({ file: cutFile, port: 0, staticDir: built.dir, log: () => undefined });
    // A zone 5 h 30 min off UTC: a time said in the page's zone differs from UTC in hours and minutes.
    browser = await launchBrowser(undefined, PAGE_ZONE);
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await replay?.close();
    await cut?.close();
    removeBuild?.();
  });

  const alertsInPage = () => page.evaluate(() => (window as unknown as StoreView).__semscope.store.alertList());

  it("opens in replay mode with the alerts on the timeline, at the first alert", async () => {
    await page.goto(replay.url);
    await page.getByTestId("replay-banner").waitFor();
    expect(await page.getByTestId("replay-banner").textContent()).toContain("scenario.ndjson.gz");
    await page.getByTestId("overview").waitFor();
    // One mark per alert the live hub raised.
    await until("the marks", () => page.getByTestId("replay-mark").count(), (n) => n === live.length, 10_000);
    expect(await page.getByTestId("replay-mark").and(page.locator('[data-rule="leak"]')).count()).toBe(live.filter((a) => a.rule === "leak").length);
    expect(await page.getByTestId("replay-message").count()).toBe(0);
    expect(await page.getByTestId("connection-state").textContent()).toBe("Replay");
    // It opens at the first alert, not at the end (after shutdown, every agent gone).
    const firstAt = Math.min(...replay.session.marks.map((m) => m.at));
    expect(await page.getByTestId("replay-cursor").textContent()).toBe(utc(firstAt));
    // At the end, the page holds the alerts the live hub ended with, evidence included.
    const scrubber = page.getByTestId("replay-scrubber");
    await scrubber.focus();
    await page.keyboard.press("End");
    const end = await until("the live alerts", alertsInPage, (a) => a.length === live.length, 10_000);
    const byId = (xs: Alert[]) => [...xs].sort((x, y) => (x.id < y.id ? -1 : 1));
    expect(byId(end)).toEqual(byId(live));
  }, 30_000);

  it("scrubs back to before the alerts, jumps to the leak with its ring, and shows the convoy's diagnosis", async () => {
    const leak = live.find((a) => a.rule === "leak")!;
    const scrubber = page.getByTestId("replay-scrubber");
    await scrubber.focus();
    await page.keyboard.press("Home");
    // The cursor is at the start: no alert yet, on the page or in the alert count.
    await until("no alerts at the start", alertsInPage, (a) => a.length === 0, 10_000);
    // "Next alert" until the leak: each press moves the cursor to the next moment an alert was raised.
    const marks = replay.session.marks;
    const leakAt = marks.find((m) => m.id === leak.id)!.at;
    const moments = [...new Set(marks.map((m) => m.at))].sort((x, y) => x - y);
    for (const t of moments) {
      if (t > leakAt) break;
      await page.getByTestId("replay-next-alert").click();
      const raisedThen = marks.filter((m) => m.at === t).map((m) => m.id);
      await until(`the alerts raised at +${t - moments[0]} ms`, alertsInPage, (a) => raisedThen.every((id) => a.some((x) => x.id === id)), 10_000);
      expect(await page.getByTestId("replay-cursor").textContent()).toBe(utc(t));
    }
    const atLeak = await until("the leak in the page", alertsInPage, (a) => a.some((x) => x.id === leak.id), 10_000);
    const shown = atLeak.find((x) => x.id === leak.id)!;
    expect(shown.raisedAt).toBe(leak.raisedAt);
    expect(shown.resolvedAt).toBeNull();
    // Open it: the evidence card with the leaked permit's acquisition stack.
    await page.getByTestId("alerts-tab").click();
    await page.getByTestId("alerts").waitFor();
    const item = page.locator(".alert-item", { hasText: "inventory / inv-1" }).filter({ hasText: "Leak" });
    await until("the leak in the list", () => item.count(), (n) => n === 1, 10_000);
    await item.click();
    const stack = page.getByTestId("evidence").locator("pre.stack").first();
    await stack.waitFor({ timeout: 5000 });
    expect(await stack.textContent()).toContain("leakyCheckoutHandler");
    // The flight recorder's ring arrives a moment after the raise (the hub asks, the agent
    // answers): scrubbing on to the end brings it, as the live view had it.
    await scrubber.focus();
    await page.keyboard.press("End");
    const withRing = await until("the leak's ring", alertsInPage, (a) => a.some((x) => x.id === leak.id && x.evidence?.flight !== undefined), 10_000);
    expect(withRing.find((x) => x.id === leak.id)?.evidence?.flight).toEqual(leak.evidence?.flight);
    // Under the alert, the ring as a timeline, as the live view shows it.
    const evidence = page.getByTestId("evidence");
    await evidence.getByTestId("flight").waitFor({ timeout: 10_000 });
    expect(await evidence.getByTestId("flight-holder").count()).toBeGreaterThan(0);
    // The convoy's diagnosis, under its alert.
    const convoy = live.find((a) => a.rule === "convoy" && a.evidence?.diagnosis !== undefined)!;
    const cause = (convoy.evidence?.diagnosis as { cause: string }).cause;
    await page.locator(".alert-item", { hasText: "payments / pay-1" }).filter({ hasText: "Convoy" }).first().click();
    const diagnosis = page.getByTestId("evidence").getByTestId("diagnosis");
    await diagnosis.waitFor({ timeout: 10_000 });
    expect(await diagnosis.getAttribute("data-cause")).toBe(cause);
  }, 60_000);

  it("says nothing is live in a replay's detail view: no Live label, no Pause", async () => {
    const leak = live.find((a) => a.rule === "leak")!;
    await page.evaluate((k) => (location.hash = `#/s/${encodeURIComponent(k)}`), leak.key);
    await page.getByTestId("detail").waitFor();
    await page.locator('[data-chart="permits"] canvas').first().waitFor({ timeout: 10_000 });
    expect(await page.getByTestId("live-state").textContent()).not.toContain("Live");
    expect(await page.getByTestId("pause").count()).toBe(0);
    expect(await page.getByTestId("connection-state").textContent()).toBe("Replay");
  }, 30_000);

  it("shows an alert at its moment with the replay's cursor moved there, both saying the same time", async () => {
    const leak = live.find((a) => a.rule === "leak")!;
    // The cursor well after the alert: at the end of the recording.
    const scrubber = page.getByTestId("replay-scrubber");
    await scrubber.focus();
    await page.keyboard.press("End");
    await until("the end", () => replay.session.cursor, (c) => c === replay.session.to, 10_000);
    expect(replay.session.to - leak.raisedAt).toBeGreaterThan(2000);
    await page.getByTestId("alerts-tab").click();
    await page.getByTestId("alerts").waitFor();
    await page.locator(`.alert-item[data-alert-id="${leak.id}"]`).click();
    const button = page.getByTestId("open-alert");
    // Said as the replay bar says times (UTC), not in the page's zone.
    expect((await button.textContent())?.trim()).toBe(`Show at ${utc(leak.raisedAt)}`);
    await button.click();
    await page.getByTestId("detail").waitFor();
    // The replay's cursor, on the hub and on the page, is where the alert was raised.
    const cursor = await until("the cursor at the alert", () => replay.session.cursor, (c) => Math.abs(c - leak.raisedAt) < 1000, 10_000);
    await until("the page's cursor", () => page.getByTestId("replay-cursor").textContent(), (t) => t === utc(cursor), 10_000);
    // And the detail view is at the same moment, said in UTC as the bar says it.
    await until("the view at the alert", () => page.getByTestId("live-state").textContent(), (t) => (t ?? "").includes(`At alert, ${utc(leak.raisedAt)}`), 10_000);
    expect(browser.errors).toEqual([]);
  }, 45_000);

  it("says a replay's chart times in UTC, as its bar does, in a page whose zone is not UTC", async () => {
    // The page really is in another zone: its local clock is 5 h 30 min ahead of UTC.
    expect(await page.evaluate(() => new Date().getTimezoneOffset())).toBe(-330);
    const leak = live.find((a) => a.rule === "leak")!;
    const permits = page.locator('[data-chart="permits"] .uplot');
    await permits.waitFor({ timeout: 10_000 });
    // Each labelled time tick is its split's time in UTC (a local label would read 5:30 later).
    const ticks = await until("the time axis", async () => [(await permits.getAttribute("data-ticks-x")) ?? "", (await permits.getAttribute("data-ticks-x-labels")) ?? ""], ([t]) => t !== "", 10_000);
    const splits = ticks[0].split(" ").map(Number);
    const labels = ticks[1].split("|");
    expect(labels.length).toBe(splits.length);
    expect(labels.filter((l) => l !== "").length).toBeGreaterThan(1);
    splits.forEach((t, i) => {
      if (labels[i] !== "") expect(utcClock(t).startsWith(labels[i]), `tick ${t} labelled ${labels[i]}`).toBe(true);
    });
    // The tooltip's time too, and it says UTC.
    const box = (await page.locator('[data-chart="permits"] .u-over').boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    const tip = (await page.locator('[data-chart="permits"] .chart-tip > div').first().textContent()) ?? "";
    await page.mouse.move(0, 0);
    expect(tip).toMatch(/^\d\d:\d\d:\d\d UTC$/);
    // The alert's marker names its time in UTC as well.
    expect(await page.getByTestId("live-state").textContent()).toContain(utc(leak.raisedAt));
    expect(browser.errors).toEqual([]);
  }, 45_000);

  it("says which alert Next alert goes to and which one the cursor is at, and draws a range as it is marked", async () => {
    const scrubber = page.getByTestId("replay-scrubber");
    await scrubber.focus();
    await page.keyboard.press("Home");
    const first = [...replay.session.marks].sort((a, b) => a.at - b.at)[0];
    const button = page.getByTestId("replay-next-alert");
    await until("the next alert named", () => button.textContent(), (t) => (t ?? "").includes(first.key), 10_000);
    const named = await button.textContent();
    const track = await scrubber.boundingBox();
    await button.click();
    const here = page.getByTestId("replay-here");
    await until("the alert at the cursor named", () => here.textContent().catch(() => ""), (t) => (t ?? "").includes(first.key), 10_000);
    // Naming another alert (of another length), the button keeps its room: the timeline stays put.
    await until("the next one named", () => button.textContent(), (t) => t !== named, 10_000);
    expect(await scrubber.boundingBox()).toEqual(track);
    // The speed select is a button like its neighbours, not the platform's bare control.
    const look = (id: string) => page.getByTestId(id).evaluate((e) => ["height", "borderRadius", "borderTopColor", "backgroundColor", "fontSize"].map((k) => getComputedStyle(e).getPropertyValue(k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`))));
    expect(await look("replay-speed")).toEqual(await look("replay-play"));
    expect(await page.getByTestId("replay-speed").evaluate((e) => getComputedStyle(e).appearance)).toBe("none");
    // Marking a range draws it on the track at once, before it is saved.
    expect(await page.getByTestId("replay-pending-range").count()).toBe(0);
    await page.getByTestId("replay-mark-from").click();
    await scrubber.focus();
    await page.keyboard.press("End");
    // From the first alert to the cursor, at the end now.
    await page.getByTestId("replay-pending-range").waitFor({ timeout: 3000 });
    expect((await page.getByTestId("replay-pending-range").boundingBox())?.width ?? 0).toBeGreaterThan(10);
    // Play and Pause take the same room.
    const play = page.getByTestId("replay-play");
    const w0 = (await play.boundingBox())?.width;
    await play.click();
    await until("playing", () => play.textContent(), (t) => t === "Pause", 5000);
    expect((await play.boundingBox())?.width).toBe(w0);
    await play.click();
    await until("paused", () => play.textContent(), (t) => t === "Play", 5000);
  }, 30_000);

  it("plays forward from the start at 60×", async () => {
    const scrubber = page.getByTestId("replay-scrubber");
    await scrubber.focus();
    await page.keyboard.press("Home");
    await until("no alerts at the start", alertsInPage, (a) => a.length === 0, 10_000);
    await page.getByTestId("replay-speed").selectOption("60");
    await page.getByTestId("replay-play").click();
    // Played through: every alert the recording holds, and the control back to "Play" at the end.
    await until("all alerts played", alertsInPage, (a) => a.length === live.length, 30_000);
    await until("the end", () => page.getByTestId("replay-play").textContent(), (t) => t === "Play", 30_000);
  }, 60_000);

  it("saves a named range marked on the timeline", async () => {
    const scrubber = page.getByTestId("replay-scrubber");
    const leakAt = replay.session.marks.find((m) => m.rule === "leak")!.at;
    await scrubber.focus();
    await page.keyboard.press("Home");
    await page.getByTestId("replay-next-alert").click();
    await until("the first alert", () => replay.session.cursor, (c) => c === replay.session.marks[0].at, 10_000);
    // The page has the cursor's status too before the range is marked there.
    await until("the page at the first alert", () => page.getByTestId("replay-cursor").textContent(), (t) => t === utc(replay.session.marks[0].at), 10_000);
    await page.getByTestId("replay-mark-from").click();
    await scrubber.focus();
    await page.keyboard.press("End");
    await until("the end", () => replay.session.cursor, (c) => c === replay.session.to, 10_000);
    await until("the page at the end", () => page.getByTestId("replay-cursor").textContent(), (t) => t === utc(replay.session.to), 10_000);
    await page.getByTestId("replay-mark-to").click();
    await page.getByTestId("replay-save-name").fill("leak incident");
    await page.getByTestId("replay-save-button").click();
    const result = page.getByTestId("replay-save-result");
    await result.waitFor({ timeout: 10_000 });
    const file = join(saveDir, "leak-incident.ndjson.gz");
    expect(await result.textContent()).toBe(`Saved ${file}`);
    expect(existsSync(file)).toBe(true);
    // The saved file holds the range asked for, the leak within it.
    const saved = await ReplaySession.open(file);
    expect(saved.range).toEqual({ name: "leak-incident", from: replay.session.marks[0].at, to: replay.session.to });
    expect(saved.marks.some((m) => m.at === leakAt && m.rule === "leak")).toBe(true);
    saved.close();
  }, 30_000);

  it("opens a recording cut short up to the damage, saying where it stopped", async () => {
    await page.goto(cut.url);
    const message = page.getByTestId("replay-message");
    await message.waitFor({ timeout: 10_000 });
    const text = (await message.textContent()) ?? "";
    expect(text).toMatch(/stopped at line \d+ \(byte \d+ of the recording's text; recorded time reached \d{4}-\d\d-\d\dT[\d:.]+Z\): the compressed data ends early/);
    expect(text).toContain("everything before it was loaded");
    // What came before the damage is there.
    await page.getByTestId("overview").waitFor();
    expect(cut.session.summary.lines).toBeGreaterThan(10);
    // No page errors or console errors along the way.
    expect(browser.errors).toEqual([]);
  }, 30_000);
});
