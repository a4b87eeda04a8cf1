// The packaged app's built-in demo: the bundle packaging makes (build/bundle-demo.mjs, run here
// into a temp app folder), found beside the app, run as real processes against a real hub, and
// started and stopped by the shell as the "Run the demo service" setting and the hub say.
// Processes are plain Node children here (the app uses Electron utility processes).
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { DEMO_FLEET_FILE, DemoService, findDemo, type DemoPlan, type ForkDemo } from "../../../main/app/demo-service.js";
import type { MenuItemData } from "../../../main/app/menu-template.js";
import { ShellController, type ShellView } from "../../../main/app/shell-controller.js";
import type { ShellHub, StartHub } from "../../../main/app/shell-hub.js";
import { createHub, type Hub } from "../../../main/hub/index.js";
import { defaultSettings } from "../../../main/settings/settings-schema.js";
import { SettingsStore } from "../../../main/settings/settings-store.js";
import { alive, bundleDemo } from "../demo-bundle.js";

let appRoot: string;
let plan: DemoPlan;
const cleanups: (() => unknown)[] = [];

beforeAll(() => {
  appRoot = mkdtempSync(join(tmpdir(), "semscope-demo-app-"));
  bundleDemo(join(appRoot, "dist", "demo"));
  const found = findDemo(appRoot);
  if ("missing" in found) throw new Error(found.missing);
  plan = found;
}, 150_000);
afterAll(() => rmSync(appRoot, { recursive: true, force: true }));
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const children = new Set<number>();
/** What the app does with utilityProcess.fork, with Node's own child_process. */
const nodeFork: ForkDemo = (script, args, env) => {
  const p = spawn(process.execPath, [script, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"] });
  if (p.pid !== undefined) children.add(p.pid);
  let code: number | null | undefined;
  const waiting: ((c: number | null) => void)[] = [];
  p.once("exit", (c) => {
    code = c;
    if (p.pid !== undefined) children.delete(p.pid);
    for (const fn of waiting.splice(0)) fn(c);
  });
  return {
    pid: p.pid,
    kill: () => void p.kill("SIGTERM"),
    onExit: (fn) => (code !== undefined ? fn(code) : waiting.push(fn)),
  };
};

async function hub(opts: { token?: string } = {}): Promise<Hub> {
  const h = await createHub({ port: 0, log: () => undefined, ...opts });
  cleanups.push(() => h.close());
  return h;
}

function service(extra: Partial<ConstructorParameters<typeof DemoService>[0]> = {}): DemoService {
  const d = new DemoService({ ...plan, fork: nodeFork, log: () => undefined, ...extra });
  cleanups.push(() => d.stop());
  return d;
}

const connectedServices = (h: Hub) =>
  h
    .state()
    .agents.filter((a) => a.connected)
    .map((a) => `${a.service}/${a.instance}`)
    .sort();

const FLEET = () => plan.fleet.map((s) => `${s.service}/${s.instance}`).sort();

describe("findDemo", () => {
  it("finds the bundled service and its fleet beside the app, or says why not", () => {
    expect(plan.script).toBe(join(appRoot, "dist", "demo", "service.mjs"));
    expect(plan.fleet.map((s) => s.service)).toEqual(expect.arrayContaining(["checkout", "inventory", "search"]));
    expect(plan.fleet.flatMap((s) => s.scenarios)).toEqual(expect.arrayContaining(["leaking-pool", "convoy", "double-release", "over-budget", "order-inversion"]));

    const empty = mkdtempSync(join(tmpdir(), "semscope-nodemo-"));
    cleanups.push(() => rmSync(empty, { recursive: true, force: true }));
    expect(findDemo(empty)).toEqual({ missing: expect.stringContaining("the demo is not bundled") });
    mkdirSync(join(empty, "dist", "demo"), { recursive: true });
    writeFileSync(join(empty, "dist", "demo", "service.mjs"), "");
    writeFileSync(join(empty, DEMO_FLEET_FILE), JSON.stringify([{ service: "x" }]));
    expect(findDemo(empty)).toEqual({ missing: expect.stringContaining("is not a list of { service, instance, scenarios }") });
  });
});

describe("DemoService", () => {
  it("streams every demo process to the hub (through its token), and stop() ends them all", async () => {
    const h = await hub({ token: "demo-t0k" });
    const demo = service();
    await demo.start(h.url, "demo-t0k");
    expect(demo.streamingTo).toBe(h.url);
    const pids = demo.pids;
    expect(pids).toHaveLength(plan.fleet.length);
    await vi.waitFor(() => expect(connectedServices(h)).toEqual(FLEET()), { timeout: 30_000, interval: 200 });
    // They are the real demo: its semaphores are registered with their config, and samples flow.
    await vi.waitFor(() => expect(h.state().semaphores.map((s) => s.key)).toContain("checkout/checkout-1/payments-db"), { timeout: 10_000 });

    await demo.stop();
    expect(demo.streamingTo).toBeNull();
    expect(demo.pids).toEqual([]);
    for (const pid of pids) expect(alive(pid)).toBe(false);
    await vi.waitFor(() => expect(connectedServices(h)).toEqual([]), { timeout: 10_000 });
  }, 60_000);

  it("restarts a process that dies while the demo runs", async () => {
    const h = await hub();
    const demo = service({ firstBackoffMs: 100 });
    await demo.start(h.url, null);
    await vi.waitFor(() => expect(connectedServices(h)).toEqual(FLEET()), { timeout: 30_000, interval: 200 });
    const [victim] = demo.pids;
    process.kill(victim, "SIGKILL");
    await vi.waitFor(
      () => {
        expect(demo.pids).toHaveLength(plan.fleet.length);
        expect(demo.pids).not.toContain(victim);
      },
      { timeout: 15_000, interval: 100 },
    );
    await vi.waitFor(() => expect(connectedServices(h)).toEqual(FLEET()), { timeout: 30_000, interval: 200 });
  }, 60_000);
});

describe("ShellController and the demo", () => {
  let menu: MenuItemData[] = [];
  const demoMenuItem = () => (menu.find((m) => m.kind === "submenu" && m.label === "&Hub") as Extract<MenuItemData, { kind: "submenu" }>).items.find((i) => i.kind === "checkbox");
  const view: ShellView = {
    show: async () => undefined,
    focusWindow: () => undefined,
    sendFocusSemaphore: () => undefined,
    sendShowSettings: () => undefined,
    setApplicationMenu: (m) => void (menu = m),
    setTray: () => undefined,
    notify: () => undefined,
    reportProblem: () => undefined,
    quit: () => undefined,
  };

  it("runs the demo against the local hub while 'Run the demo service' is on (the default), and stops it on save and on quit", async () => {
    const dir = mkdtempSync(join(tmpdir(), "semscope-shell-demo-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    // No settings file yet: a first launch.
    const store = await SettingsStore.open(join(dir, "settings.json"));
    expect(store.current.runDemo).toBe(true);
    const hubs: ShellHub[] = [];
    const startHub: StartHub = async (opts) => {
      const h = await createHub({ ...opts, port: 0, log: () => undefined });
      hubs.push(h);
      return h;
    };
    const demo = service();
    const c = new ShellController({ store, startHub, view, platform: "linux", isPackaged: true, demo, localPollMs: 50, log: () => undefined });
    cleanups.push(() => c.shutdown());
    await c.start();
    const local = hubs[0] as Hub;
    expect(demo.streamingTo).toBe(local.url);
    await vi.waitFor(() => expect(connectedServices(local)).toEqual(FLEET()), { timeout: 30_000, interval: 200 });

    const off = await c.saveSettings({ ...store.current, runDemo: false });
    expect(off).toMatchObject({ ok: true, reconnecting: false });
    await vi.waitFor(() => expect(demo.streamingTo).toBeNull(), { timeout: 10_000 });
    expect(demoMenuItem()).toMatchObject({ checked: false, enabled: true });
    await vi.waitFor(() => expect(connectedServices(local)).toEqual([]), { timeout: 10_000 });

    // The Hub menu's checkbox turns it back on, and the choice is saved.
    c.onMenuAction({ type: "toggle-demo" });
    await vi.waitFor(() => expect(demo.pids).toHaveLength(plan.fleet.length), { timeout: 10_000 });
    expect((await SettingsStore.open(join(dir, "settings.json"))).current.runDemo).toBe(true);
    expect(demoMenuItem()).toMatchObject({ checked: true });
    const pids = demo.pids;
    await c.shutdown();
    expect(demo.streamingTo).toBeNull();
    for (const pid of pids) expect(alive(pid)).toBe(false);
  }, 90_000);

  it("does not run the demo when the window shows a remote hub", async () => {
    const dir = mkdtempSync(join(tmpdir(), "semscope-shell-demo-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const remote = await hub();
    const s = defaultSettings();
    s.remoteHubs = [{ id: "r1", name: "Remote", url: remote.url, token: null }];
    s.activeRemoteId = "r1";
    writeFileSync(join(dir, "settings.json"), JSON.stringify(s));
    const store = await SettingsStore.open(join(dir, "settings.json"));
    const demo = service();
    const c = new ShellController({
      store,
      startHub: () => Promise.reject(new Error("no local hub expected")),
      view,
      platform: "linux",
      isPackaged: true,
      demo,
      remoteReader: () => async () => [],
      log: () => undefined,
    });
    cleanups.push(() => c.shutdown());
    await c.start();
    expect(demo.streamingTo).toBeNull();
    expect(demo.pids).toEqual([]);
  });
});

afterAll(() => {
  // Nothing may outlive the tests, whatever failed.
  for (const pid of children) if (alive(pid)) process.kill(pid, "SIGKILL");
});
