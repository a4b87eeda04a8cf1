// The built-in demo as the packaged app runs it: the bundled demo service (build/bundle-demo.mjs:
// dist/demo/service.mjs) once per process of dist/demo/fleet.json, each streaming to the local
// hub like any real service. How a process is started is the caller's: an Electron utility
// process in the app (main/electron/), a plain Node child in tests. A process that dies while
// the demo should run is started again after a growing pause, and given up on if it keeps dying.
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";

export const DEMO_SERVICE_FILE = join("dist", "demo", "service.mjs");
export const DEMO_FLEET_FILE = join("dist", "demo", "fleet.json");

export interface DemoServiceSpec {
  readonly service: string;
  readonly instance: string;
  readonly scenarios: readonly string[];
}

/** A started demo process, whatever runs it. */
export interface DemoProcess {
  readonly pid: number | undefined;
  /** Ask it to stop (SIGTERM: it flushes its agent and exits). */
  kill(): void;
  /** Once, when it has exited (code null: killed by a signal). */
  onExit(fn: (code: number | null) => void): void;
}

/** Starts `script` with `args`; `env` is added to the process's environment. */
export type ForkDemo = (script: string, args: string[], env: Record<string, string>, name: string) => DemoProcess;

export interface DemoPlan {
  /** The bundled service. */
  script: string;
  fleet: readonly DemoServiceSpec[];
}

/** The demo beside the app (appRoot: the folder holding dist/), or why there is none. */
export function findDemo(appRoot: string): DemoPlan | { missing: string } {
  const script = join(appRoot, DEMO_SERVICE_FILE);
  const fleetFile = join(appRoot, DEMO_FLEET_FILE);
  let fleet: unknown;
  try {
    if (!statSync(script).isFile()) throw new Error(`${script} is not a file`);
    fleet = JSON.parse(readFileSync(fleetFile, "utf8"));
  } catch (err) {
    return { missing: `the demo is not bundled (${err instanceof Error ? err.message : String(err)})` };
  }
  const ok =
    Array.isArray(fleet) &&
    fleet.length > 0 &&
    fleet.every(
      (s: unknown) =>
        typeof s === "object" &&
        s !== null &&
        typeof (s as DemoServiceSpec).service === "string" &&
        typeof (s as DemoServiceSpec).instance === "string" &&
        Array.isArray((s as DemoServiceSpec).scenarios) &&
        (s as DemoServiceSpec).scenarios.every((x) => typeof x === "string"),
    );
  if (!ok) return { missing: `${fleetFile} is not a list of { service, instance, scenarios }` };
  return { script, fleet: fleet as DemoServiceSpec[] };
}

export interface DemoServiceOptions extends DemoPlan {
  fork: ForkDemo;
  log: (line: string) => void;
  /** Restarts of one process allowed within restartWindowMs (default 5 in 10 min). */
  maxRestarts?: number;
  restartWindowMs?: number;
  /** First pause before a restart (doubles each time, at most 30 s); default 1 s. */
  firstBackoffMs?: number;
  /** A process still running this long after stop() asked is left behind (reported); default 6 s. */
  stopTimeoutMs?: number;
}

interface Slot {
  readonly spec: DemoServiceSpec;
  proc: DemoProcess | undefined;
  exited: Promise<void>;
  crashes: number[];
  timer: ReturnType<typeof setTimeout> | undefined;
}

const MAX_BACKOFF_MS = 30_000;

export class DemoService {
  private slots: Slot[] = [];
  private target: { url: string; token: string | null } | null = null;

  constructor(private readonly opts: DemoServiceOptions) {}

  /** The hub it streams to, null when stopped. */
  get streamingTo(): string | null {
    return this.target?.url ?? null;
  }

  get pids(): number[] {
    return this.slots.flatMap((s) => (s.proc?.pid !== undefined ? [s.proc.pid] : []));
  }

  /** Streams to `url` (restarting every process if it streamed elsewhere or with another token). */
  async start(url: string, token: string | null): Promise<void> {
    if (this.target !== null && this.target.url === url && this.target.token === token) return;
    await this.stop();
    this.target = { url, token };
    this.slots = this.opts.fleet.map((spec) => ({ spec, proc: undefined, exited: Promise.resolve(), crashes: [], timer: undefined }));
    for (const slot of this.slots) this.launch(slot);
    this.opts.log(`semscope demo: ${this.slots.length} service processes streaming to ${url}`);
  }

  /** Stops every process and waits for them to exit (at most stopTimeoutMs). Idempotent. */
  async stop(): Promise<void> {
    if (this.target === null) return;
    this.target = null;
    const slots = this.slots;
    this.slots = [];
    for (const s of slots) {
      if (s.timer !== undefined) clearTimeout(s.timer);
      s.timer = undefined;
      s.proc?.kill();
    }
    const limit = this.opts.stopTimeoutMs ?? 6000;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), limit)));
    const done = await Promise.race([Promise.all(slots.map((s) => s.exited)).then(() => "done" as const), late]);
    clearTimeout(timer);
    if (done === "late") this.opts.log(`semscope demo: some service processes did not exit within ${limit} ms`);
  }

  private launch(slot: Slot): void {
    const target = this.target;
    if (target === null) return;
    const { spec } = slot;
    const args = ["--service", spec.service, "--instance", spec.instance, "--scenarios", spec.scenarios.join(","), "--url", target.url];
    // The token goes in the environment, never on a command line others can read.
    const env: Record<string, string> = target.token !== null ? { SEMSCOPE_TOKEN: target.token } : {};
    let proc: DemoProcess;
    try {
      proc = this.opts.fork(this.opts.script, args, env, `semscope-demo-${spec.instance}`);
    } catch (err) {
      this.crashed(slot, err instanceof Error ? err.message : String(err));
      return;
    }
    slot.proc = proc;
    slot.exited = new Promise((resolve) =>
      proc.onExit((code) => {
        if (slot.proc === proc) slot.proc = undefined;
        resolve();
        // Stopped (or restarted elsewhere) on purpose: nothing to report.
        if (this.target !== target || !this.slots.includes(slot)) return;
        // Exit 2: it refused its arguments; starting it again would change nothing.
        if (code === 2) this.opts.log(`semscope demo: ${spec.instance} refused its arguments; not restarting it`);
        else this.crashed(slot, code === null ? "killed" : `exit code ${code}`);
      }),
    );
  }

  private crashed(slot: Slot, why: string): void {
    const now = Date.now();
    const window = this.opts.restartWindowMs ?? 10 * 60_000;
    slot.crashes = slot.crashes.filter((t) => now - t < window);
    slot.crashes.push(now);
    if (slot.crashes.length > (this.opts.maxRestarts ?? 5)) {
      this.opts.log(`semscope demo: ${slot.spec.instance} stopped (${why}) ${slot.crashes.length} times; not restarting it`);
      return;
    }
    const delay = Math.min(MAX_BACKOFF_MS, (this.opts.firstBackoffMs ?? 1000) * 2 ** (slot.crashes.length - 1));
    this.opts.log(`semscope demo: ${slot.spec.instance} stopped (${why}); restarting in ${delay} ms`);
    slot.timer = setTimeout(() => {
      slot.timer = undefined;
      if (this.slots.includes(slot)) this.launch(slot);
    }, delay);
  }
}
