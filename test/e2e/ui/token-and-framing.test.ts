// The web-mode dashboard in Chromium (issue 28): with nothing reporting yet, it shows the hub's
// token beside the connect snippet, so a service can be given it; and a page of another origin
// that frames the dashboard gets nothing (frame-ancestors 'none', X-Frame-Options: DENY): the
// dashboard never runs inside it, so no click there can reach its buttons.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHub, type Hub } from "../../../main/hub/index.js";
import { buildRenderer, launchBrowser, until, type Browser } from "../browser.js";

const TOKEN = "s3cret-token";

/** Dashboards connected to the hub's /ui now (GET /api/stats). */
async function uiClients(): Promise<number> {
  const res = await fetch(`${hub.url}/api/stats`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  return ((await res.json()) as { uiClients: number }).uiClients;
}

let built: { dir: string; remove: () => void };
let hub: Hub;
let browser: Browser;
let other: Server;
let otherOrigin: string;

beforeAll(async () => {
  built = await buildRenderer();
  hub = await createHub({ port: 0, staticDir: built.dir, token: TOKEN, log: () => undefined });
  browser = await launchBrowser();
  // Another origin (another port): a stranger's page framing the dashboard, and a plain page of
  // its own to show what a frame that is allowed to load looks like.
  other = createServer((req, res) => {
    res.setHeader("Content-Type", "text/html; charset=utf-8");
    if (req.url === "/own") res.end("<!doctype html><p id=own>framed fine</p>");
    else res.end(`<!doctype html><iframe id=own src="/own"></iframe><iframe id=dash src="${hub.url}/?token=${TOKEN}" width=1200 height=800></iframe>`);
  });
  await new Promise<void>((r) => other.listen(0, "127.0.0.1", r));
  otherOrigin = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await hub?.close();
  other?.closeAllConnections();
  await new Promise((r) => other?.close(r));
  built?.remove();
});

describe("the web-mode dashboard page", () => {
  it("with nothing reporting, shows the hub's token for a service to be given, outside the snippet", async () => {
    const tab = await browser.context.newPage();
    try {
      await tab.goto(`${hub.url}/?token=${TOKEN}`);
      const token = tab.getByTestId("hub-token");
      await token.waitFor({ timeout: 15_000 });
      expect(await token.textContent()).toBe(`SEMSCOPE_TOKEN=${TOKEN}`);
      expect(await tab.getByTestId("agent-snippet").textContent()).not.toContain(TOKEN);
    } finally {
      await tab.close();
    }
  }, 30_000);

  it("framed by a page of another origin, never loads: no dashboard runs in the frame and none connects to the hub", async () => {
    await until("no dashboard connected", uiClients, (n) => n === 0, 10_000);
    const tab = await browser.context.newPage();
    try {
      await tab.goto(`${otherOrigin}/`, { waitUntil: "load" });
      // The stranger's own frame loads: frames on this page do load when allowed.
      const own = await until("the page's own frame", () => tab.frames().find((f) => f.url() === `${otherOrigin}/own`), (f) => f !== undefined, 10_000);
      expect(await own?.locator("#own").textContent()).toBe("framed fine");
      // The dashboard's frame is refused before anything of it runs.
      const dash = tab.frames().find((f) => f !== tab.mainFrame() && f !== own);
      expect(dash).toBeDefined();
      expect(dash?.url()).not.toContain(hub.url);
      expect(await dash?.locator("[data-testid=overview], [data-testid=agent-snippet], button").count().catch(() => 0)).toBe(0);
      // The same address in a tab of its own is the dashboard, connected.
      const direct = await browser.context.newPage();
      try {
        await direct.goto(`${hub.url}/?token=${TOKEN}`);
        await direct.getByTestId("hub-token").waitFor({ timeout: 15_000 });
        // One dashboard connected: this tab's, none from the frame.
        await until("the dashboard connected", uiClients, (n) => n === 1, 10_000);
      } finally {
        await direct.close();
      }
    } finally {
      await tab.close();
    }
    expect(browser.errors.filter((e) => !/frame-ancestors|X-Frame-Options|Refused to (display|frame)/i.test(e))).toEqual([]);
  }, 60_000);
});
