// The web-mode dashboard in Chromium (issue 28): with nothing reporting yet, it shows the hub's
// token beside the connect snippet, so a service can be given it (or, where the hub has an agent
// token, says to give services that one instead); and a page of another origin
// that frames the dashboard gets nothing (frame-ancestors 'none', X-Frame-Options: DENY): the
// dashboard never runs inside it, so no click there can reach its buttons.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHub, type Hub } from "../../../main/hub/index.js";
import { buildRenderer, launchBrowser, until, type Browser } from "../browser.js";

const TOKEN = "s3cret-token";

/** The socket.io requests and WebSockets a tab (any of its frames) opens to the hub. */
function hubSockets(tab: Awaited<ReturnType<Browser["context"]["newPage"]>>): string[] {
  const seen: string[] = [];
  tab.on("request", (r) => void (r.url().startsWith(hub.url) && r.url().includes("/socket.io/") && seen.push(r.url())));
  tab.on("websocket", (w) => void (w.url().includes("/socket.io/") && seen.push(w.url())));
  return seen;
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

  it("with an agent token on the hub, tells a service to use that one and never shows the page's token, which opens the dashboard", async () => {
    const withAgentToken = await createHub({ port: 0, staticDir: built.dir, token: TOKEN, agentToken: "agent-only", log: () => undefined });
    const tab = await browser.context.newPage();
    try {
      await tab.goto(`${withAgentToken.url}/?token=${TOKEN}`);
      const note = tab.getByTestId("agent-token-note");
      await note.waitFor({ timeout: 15_000 });
      expect(await note.textContent()).toContain("agent token");
      expect(await tab.getByTestId("hub-token").count()).toBe(0);
      expect(await tab.getByTestId("empty-state").innerText()).not.toContain(TOKEN);
      // The hub says it has one, never what it is.
      const state = (await (await fetch(`${withAgentToken.url}/api/state`, { headers: { Authorization: `Bearer ${TOKEN}` } })).json()) as { hub: { agentToken?: boolean } };
      expect(state.hub.agentToken).toBe(true);
      expect(JSON.stringify(state)).not.toContain("agent-only");
    } finally {
      await tab.close();
      await withAgentToken.close();
    }
  }, 30_000);

  it("framed by a page of another origin, never loads: no dashboard runs in the frame and none connects to the hub", async () => {
    // Told by the browser's own requests, not the hub's count of dashboards, which lags a closed
    // tab of an earlier test by up to a ping timeout.
    const tab = await browser.context.newPage();
    const fromFrame = hubSockets(tab);
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
      const fromTab = hubSockets(direct);
      try {
        await direct.goto(`${hub.url}/?token=${TOKEN}`);
        await direct.getByTestId("hub-token").waitFor({ timeout: 15_000 });
        // This tab's dashboard connected (so the watch sees a connection), the frame's never did.
        expect(fromTab.length).toBeGreaterThan(0);
        expect(fromFrame).toEqual([]);
      } finally {
        await direct.close();
      }
    } finally {
      await tab.close();
    }
    expect(browser.errors.filter((e) => !/frame-ancestors|X-Frame-Options|Refused to (display|frame)/i.test(e))).toEqual([]);
  }, 60_000);
});
