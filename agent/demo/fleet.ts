// The demo fleet: several service processes, each embedding the real agent, that between them
// show every alert rule within ~20 s of starting (see scenarios/). `startDemo()` is what the app
// and web mode call; `npm run demo -- --url http://127.0.0.1:7420` runs it standalone.
//
// Children never outlive the launcher: stop() terminates them, an exit hook signals them when
// the launcher exits, and each child also watches its IPC channel, which closes when the
// launcher dies by any means (even SIGKILL). A child that crashes is restarted with exponential
// backoff, at most maxRestarts times within restartWindowMs; past that it is given up on.
import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { compileService } from "./compile.js";

export interface ServiceSpec {
  readonly service: string;
  readonly instance: string;
  readonly scenarios: readonly string[];
}

/** Six processes: two services with their own problems and a replica set of four. */
export const DEFAULT_FLEET: readonly ServiceSpec[] = Object.freeze([
  { service: "checkout", instance: "checkout-1", scenarios: ["healthy-pool", "leaking-pool", "double-release", "order-inversion"] },
  { service: "inventory", instance: "inventory-1", scenarios: ["convoy", "timeouts", "starvation"] },
  { service: "search", instance: "search-1", scenarios: ["over-budget"] },
  { service: "search", instance: "search-2", scenarios: ["over-budget"] },
  { service: "search", instance: "search-3", scenarios: ["over-budget"] },
  { service: "search", instance: "search-4", scenarios: ["over-budget", "network-blip"] },
]);

export interface DemoOptions {
  /** The hub, e.g. http://127.0.0.1:7420. */
  url: string;
  /** The hub's token, handed to the children in SEMSCOPE_TOKEN (not on their command line); default: inherited. */
  token?: string;
  /** One line per call: the launcher's own news and the children's output, prefixed by instance. */
  log?: (line: string) => void;
  /** Fault cycles run this many times faster (1 = as a user should see them). */
  speed?: number;
  /** The agents' sampling interval; default the agent's (1000 ms). */
  intervalMs?: number;
  fleet?: readonly ServiceSpec[];
  /**
   * The service entry point. Default: service.js beside this file when built; from source,
   * service.ts transpiled once to plain JS (see compile.ts), or run through tsx if that fails.
   */
  serviceScript?: string;
  /** Run service.ts through tsx in every child instead of transpiling it (costs CPU per child). */
  compile?: boolean;
  /** Node flags for the children; default `--import tsx` for a .ts entry, source maps for .js. */
  execArgv?: readonly string[];
  /** Restarts of one crashed instance allowed within restartWindowMs; default 5 in 10 min. */
  maxRestarts?: number;
  restartWindowMs?: number;
}

export interface DemoHandle {
  /** Terminates every child (SIGTERM, then SIGKILL after 5 s) and resolves once all have exited. */
  stop(): Promise<void>;
  /** Pids of the children running now. */
  readonly pids: number[];
}

const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 30_000;
/** A child that ran this long before crashing starts its backoff over. */
const HEALTHY_RUN_MS = 60_000;
const KILL_AFTER_MS = 5000;

const HERE = dirname(fileURLToPath(import.meta.url));
const BUILT = !import.meta.url.endsWith(".ts");

function defaultExecArgv(script: string): string[] {
  // Source maps: stacks in leak reports name the .ts lines. The agent's JSON import is still
  // "experimental" on Node 20 and would print a warning in every child.
  if (!script.endsWith(".ts")) return ["--enable-source-maps", "--disable-warning=ExperimentalWarning"];
  // Resolved here rather than by the child from its cwd, so any cwd works.
  const tsx = createRequire(import.meta.url).resolve("tsx");
  return ["--import", pathToFileURL(tsx).href];
}

class Child {
  proc: ChildProcess | undefined;
  startedAt = 0;
  crashes: number[] = [];
  consecutive = 0;
  restartTimer: ReturnType<typeof setTimeout> | undefined;
  exited: Promise<void> = Promise.resolve();

  constructor(readonly spec: ServiceSpec) {}
}

export async function startDemo(options: DemoOptions): Promise<DemoHandle> {
  const url = new URL(options.url);
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new TypeError(`startDemo: url must be http(s), got ${options.url}`);
  const speed = options.speed ?? 1;
  if (!Number.isFinite(speed) || speed <= 0 || speed > 100) throw new RangeError(`startDemo: speed must be in (0, 100], got ${speed}`);
  const log = options.log ?? (() => undefined);
  let entry = options.serviceScript;
  if (entry === undefined && BUILT) entry = resolve(HERE, "service.js");
  if (entry === undefined && options.compile !== false) {
    try {
      entry = (await compileService(resolve(HERE, "service.ts"))).script;
    } catch (err) {
      log(`demo: cannot transpile the service (${err instanceof Error ? err.message : String(err)}); running it with tsx`);
    }
  }
  const script = entry ?? resolve(HERE, "service.ts");
  const execArgv = options.execArgv ?? defaultExecArgv(script);
  const maxRestarts = options.maxRestarts ?? 5;
  const restartWindowMs = options.restartWindowMs ?? 10 * 60_000;
  // Without a token the children inherit SEMSCOPE_TOKEN, as a hub started in this environment would.
  const env = options.token !== undefined ? { ...process.env, SEMSCOPE_TOKEN: options.token } : process.env;

  const children = (options.fleet ?? DEFAULT_FLEET).map((spec) => new Child(spec));
  let stopping: Promise<void> | undefined;

  function launch(c: Child): Promise<void> {
    const { spec } = c;
    const args = [
      ...execArgv,
      script,
      "--service", spec.service,
      "--instance", spec.instance,
      "--scenarios", spec.scenarios.join(","),
      "--url", url.origin,
      "--speed", String(speed),
      ...(options.intervalMs !== undefined ? ["--interval-ms", String(options.intervalMs)] : []),
    ];
    const proc = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe", "ipc"] });
    c.proc = proc;
    c.startedAt = Date.now();
    for (const stream of [proc.stdout, proc.stderr]) {
      if (stream !== null) createInterface({ input: stream }).on("line", (line) => log(`[${spec.instance}] ${line}`));
    }
    c.exited = new Promise((done) => {
      proc.once("exit", (code, signal) => {
        if (c.proc === proc) c.proc = undefined;
        done();
        if (stopping !== undefined) return;
        // Exit 2 is the service refusing its arguments: starting it again would change nothing.
        if (code === 2) log(`[${spec.instance}] exited (bad arguments); not restarting it`);
        else crashed(c, code === null ? `signal ${signal}` : `exit code ${code}`);
      });
    });
    return new Promise((started) => {
      proc.once("spawn", started);
      // A spawn that fails emits error (and no exit): treat it as a crash. Later errors (a
      // failed kill) are only logged; without a listener they would throw in the launcher.
      proc.on("error", (err) => {
        if (proc.pid !== undefined) {
          log(`[${spec.instance}] ${err.message}`);
          return;
        }
        log(`[${spec.instance}] could not start: ${err.message}`);
        if (c.proc === proc) c.proc = undefined;
        started();
        if (stopping === undefined) crashed(c, err.message);
      });
    });
  }

  function crashed(c: Child, why: string): void {
    const now = Date.now();
    c.consecutive = now - c.startedAt >= HEALTHY_RUN_MS ? 1 : c.consecutive + 1;
    c.crashes = c.crashes.filter((t) => now - t < restartWindowMs);
    c.crashes.push(now);
    if (c.crashes.length > maxRestarts) {
      log(`[${c.spec.instance}] exited (${why}); ${c.crashes.length} crashes within ${Math.round(restartWindowMs / 1000)} s: not restarting it`);
      return;
    }
    const delay = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (c.consecutive - 1));
    log(`[${c.spec.instance}] exited (${why}); restarting in ${delay / 1000} s`);
    c.restartTimer = setTimeout(() => {
      c.restartTimer = undefined;
      if (stopping === undefined) void launch(c);
    }, delay);
  }

  // The launcher exiting without stop() (process.exit, an uncaught error) still takes them along.
  const onExit = (): void => {
    for (const c of children) c.proc?.kill("SIGTERM");
  };
  process.on("exit", onExit);

  async function stopAll(): Promise<void> {
    for (const c of children) {
      if (c.restartTimer !== undefined) clearTimeout(c.restartTimer);
      c.restartTimer = undefined;
    }
    await Promise.all(
      children.map(async (c) => {
        const proc = c.proc;
        if (proc === undefined) return;
        proc.kill("SIGTERM");
        const killer = setTimeout(() => proc.kill("SIGKILL"), KILL_AFTER_MS);
        await c.exited;
        clearTimeout(killer);
      }),
    );
    process.removeListener("exit", onExit);
  }

  await Promise.all(children.map((c) => launch(c)));
  log(`demo: ${children.length} service processes streaming to ${url.origin}`);
  return {
    stop: () => (stopping ??= stopAll()),
    get pids(): number[] {
      return children.flatMap((c) => (c.proc?.pid !== undefined ? [c.proc.pid] : []));
    },
  };
}

// ---- standalone: npm run demo -- --url http://127.0.0.1:7420 [--speed 1] ----

function fail(message: string): never {
  process.stderr.write(`semscope demo: ${message}\n`);
  process.exit(2);
}

async function cli(): Promise<void> {
  let v;
  try {
    v = parseArgs({ options: { url: { type: "string" }, speed: { type: "string" }, quiet: { type: "boolean", short: "q" } }, strict: true }).values;
  } catch (err) {
    fail(`${err instanceof Error ? err.message : String(err)} (usage: npm run demo -- [--url http://127.0.0.1:7420] [--speed 1] [--quiet])`);
  }
  const urlText = v.url ?? process.env.SEMSCOPE_URL ?? "http://127.0.0.1:7420";
  const speed = v.speed === undefined ? 1 : Number(v.speed);
  const token = process.env.SEMSCOPE_TOKEN;
  let demo: DemoHandle | undefined;
  try {
    demo = await startDemo({
      url: urlText,
      speed,
      ...(token !== undefined && token !== "" ? { token } : {}),
      log: v.quiet === true ? undefined : (line) => void process.stderr.write(`${line}\n`),
    });
  } catch (err) {
    fail(err instanceof Error ? err.message : String(err));
  }
  const handle = demo as DemoHandle;
  process.stdout.write(`semscope demo streaming to ${new URL(urlText).origin} (pids ${handle.pids.join(", ")})\n`);
  let done = false;
  const shutdown = (): void => {
    if (done) return;
    done = true;
    void handle.stop().then(() => process.exit(0));
  };
  process.once("SIGINT", shutdown);
  process.once("SIGTERM", shutdown);
  // Started by an app over IPC: go when it goes.
  if (process.send !== undefined) process.once("disconnect", shutdown);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) void cli();
