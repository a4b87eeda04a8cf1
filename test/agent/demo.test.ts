// The built-in demo against a real hub: a headless hub in a child process, the demo fleet (six
// service processes, each with the real agent) started through startDemo() with its cycles
// sped up, and every alert rule read back from GET /api/alerts. Then a crashed child comes
// back, and stop() leaves no process behind.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDemo, type DemoHandle } from "../../agent/demo/fleet.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const HUB_CLI = fileURLToPath(new URL("../../main/hub/cli.ts", import.meta.url));
/** The hub is another engineer's work in progress: wait this long for its entry point to appear. */
const HUB_WAIT_MS = 5 * 60_000;
/** Every rule must have shown by then (speed 2: the last, convoy, at ~10 s after start). */
const ALERTS_WITHIN_MS = 60_000;
const SPEED = 2;

interface Alert {
  id: string;
  rule: string;
  severity: "warning" | "critical";
  key: string;
  service: string;
  instance?: string;
  semaphore?: string;
  message: string;
  raisedAt: number;
  resolvedAt: number | null;
  evidence?: Record<string, unknown>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function waitFor<T>(what: string, withinMs: number, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${withinMs} ms waiting for ${what}`);
    await sleep(250);
  }
}

let hub: ChildProcess | undefined;
let hubExit: Promise<unknown> = Promise.resolve();
let url = "";
let demo: DemoHandle | undefined;
const logs: string[] = [];

async function alerts(): Promise<Alert[]> {
  const res = await fetch(`${url}/api/alerts`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { alerts: Alert[] }).alerts;
}

/** The first alert matching, as a readable line for failure messages. */
function describeAlerts(list: Alert[]): string {
  return list.map((a) => `${a.rule} ${a.key}${a.resolvedAt !== null ? " (resolved)" : ""}`).join("\n  ");
}

beforeAll(async () => {
  await waitFor("main/hub/cli.ts to exist", HUB_WAIT_MS, () => (existsSync(HUB_CLI) ? true : undefined));
  const child = spawn(process.execPath, ["--import", "tsx", HUB_CLI, "--port", "0"], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  hub = child;
  hubExit = new Promise((r) => child.once("exit", r));
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`hub exited (${code}) before listening: ${stderr}`)));
  });
  const m = /^semscope hub listening on (http:\/\/\S+)$/.exec(line);
  if (m === null) throw new Error(`unexpected first line from the hub: ${line}`);
  url = m[1];
}, HUB_WAIT_MS + 30_000);

afterAll(async () => {
  await demo?.stop();
  if (hub !== undefined && hub.exitCode === null && hub.signalCode === null) {
    hub.kill("SIGTERM");
    const killer = setTimeout(() => hub?.kill("SIGKILL"), 6000);
    await hubExit;
    clearTimeout(killer);
  }
}, 30_000);

describe("the demo fleet", () => {
  it("shows every rule, recovers its leak, restarts a crashed service and leaves nothing running", async () => {
    const startedAt = Date.now();
    demo = await startDemo({ url, speed: SPEED, log: (l) => void logs.push(l) });
    expect(demo.pids).toHaveLength(6);

    type Check = { rule: string; why: string; ok: (a: Alert) => boolean };
    const checks: Check[] = [
      {
        rule: "leak",
        why: "payments-db leak with the acquire stack in leaking-pool.ts",
        ok: (a) => a.key === "checkout/checkout-1/payments-db" && JSON.stringify(a.evidence ?? {}).includes("leaking-pool.ts"),
      },
      { rule: "convoy", why: "inventory-api convoy", ok: (a) => a.key === "inventory/inventory-1/inventory-api" },
      { rule: "double_release", why: "fx-rates double release", ok: (a) => a.key === "checkout/checkout-1/fx-rates" },
      { rule: "over_budget", why: "search-backend over its budget of 25", ok: (a) => a.key === "search/search-backend" && a.evidence?.budget === 25 },
      { rule: "order_inversion", why: "orders-lock / stock-lock inversion", ok: (a) => /checkout\/checkout-1\/(orders|stock)-lock/.test(a.key) },
      { rule: "timeouts", why: "shipping-quotes shedding", ok: (a) => a.key === "inventory/inventory-1/shipping-quotes" },
      { rule: "starvation", why: "export-workers (LIFO) starving", ok: (a) => a.key === "inventory/inventory-1/export-workers" },
      { rule: "agent_down", why: "search-4's network blip", ok: (a) => a.key === "search/search-4" },
    ];
    const seenAt = new Map<string, number>();
    let last: Alert[] = [];
    try {
      await waitFor("every rule", ALERTS_WITHIN_MS, async () => {
        last = await alerts();
        for (const c of checks) {
          if (!seenAt.has(c.rule) && last.some((a) => a.rule === c.rule && c.ok(a))) seenAt.set(c.rule, Date.now() - startedAt);
        }
        return seenAt.size === checks.length ? true : undefined;
      });
    } catch (err) {
      const missing = checks.filter((c) => !seenAt.has(c.rule)).map((c) => c.why);
      throw new Error(`${(err as Error).message}; missing: ${missing.join(", ")}\nalerts:\n  ${describeAlerts(last)}\nlog tail:\n${logs.slice(-30).join("\n")}`);
    }
    // A leak is bounded: the lease (10 s at speed 2) takes the permit back and the alert resolves.
    await waitFor("the leak to be reclaimed by its lease", 30_000, async () => {
      const list = await alerts();
      return list.some((a) => a.rule === "leak" && a.key === "checkout/checkout-1/payments-db" && a.resolvedAt !== null) ? true : undefined;
    });
    const state = (await (await fetch(`${url}/api/state`)).json()) as { semaphores: { key: string; cap: number; inUse: number }[] };
    const payments = state.semaphores.find((s) => s.key === "checkout/checkout-1/payments-db");
    expect(payments?.inUse ?? Infinity).toBeLessThan(payments?.cap ?? 0);
    console.log(`rules seen after (ms since startDemo): ${JSON.stringify(Object.fromEntries(seenAt))}`);

    // A child that dies (search-1, the third launched) is started again after 1 s and reports
    // again: the hub raises agent_down for it on the disconnect and resolves it when it is back.
    const before = demo.pids;
    const victim = before[2];
    const killedAt = Date.now();
    process.kill(victim, "SIGKILL");
    await waitFor("the killed service to be restarted", 15_000, () => {
      const now = (demo as DemoHandle).pids;
      return now.length === 6 && !now.includes(victim) ? true : undefined;
    });
    expect(logs.some((l) => /\[search-1\] exited \(signal SIGKILL\); restarting in 1 s/.test(l))).toBe(true);
    await waitFor("search-1 to be back on the hub", 20_000, async () => {
      const list = await alerts();
      return list.some((a) => a.rule === "agent_down" && a.key === "search/search-1" && a.raisedAt >= killedAt - 1000 && a.resolvedAt !== null) ? true : undefined;
    });

    const pids = demo.pids;
    const stopStarted = Date.now();
    await demo.stop();
    expect(Date.now() - stopStarted).toBeLessThan(6000);
    expect(demo.pids).toEqual([]);
    for (const pid of [...before, ...pids]) expect(alive(pid), `pid ${pid} still running`).toBe(false);
    // Each child closed its agent on SIGTERM (a clean exit, not a kill).
    expect(logs.filter((l) => l.endsWith("stopped (SIGTERM)"))).toHaveLength(6);
  }, 150_000);
});
