// A built dashboard served by a hub in this process, open in Chromium: for browser tests that
// drive the hub through its own sockets rather than a real agent's child process.
import type { Hub, HubOptions } from "../../../main/hub/index.js";
import { cleanupAll, startHub } from "../../main/hub/helpers.js";
import { buildRenderer, launchBrowser, type Browser } from "../browser.js";

export interface HubDashboard {
  readonly hub: Hub;
  readonly browser: Browser;
  close(): Promise<void>;
}

/**
 * Builds the renderer, starts a hub serving it (with `opts`), runs `before` (agents the page should
 * find), then opens the page.
 */
export async function openHubDashboard(before: (hub: Hub) => Promise<void> = async () => undefined, opts: HubOptions = {}): Promise<HubDashboard> {
  const built = await buildRenderer();
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close();
    await cleanupAll();
    built.remove();
  };
  try {
    const hub = await startHub({ ...opts, staticDir: built.dir });
    await before(hub);
    browser = await launchBrowser();
    await browser.page.goto(hub.url);
    return { hub, browser, close };
  } catch (err) {
    await close();
    throw err;
  }
}
