// Who this agent is: the process-wide identity the hub keys it by, and the defaults for the
// names a user did not give. Kept on globalThis (like the registry) so two copies of the agent
// loaded in one process still share one agentId and one seq counter.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { basename, dirname, extname, join, resolve } from "node:path";

interface ProcessState {
  /** Stable for the life of the process: a later connect() resumes the same agent on the hub. */
  readonly agentId: string;
  readonly startedAt: number;
  /**
   * The next sample seq. Per agent and never reused: since the agentId outlives one connect(),
   * so does the counter, or the hub would take a second connect()'s batches for duplicates.
   */
  nextSeq: number;
  /** The live agent, if any: one sample() consumer per process. */
  active: object | null;
}

const KEY = Symbol.for("semscope-agent.reporter.v1");

export function processState(): ProcessState {
  const g = globalThis as unknown as Record<symbol, ProcessState | undefined>;
  let s = g[KEY];
  if (s === undefined) {
    s = { agentId: randomUUID(), startedAt: Math.round(performance.timeOrigin), nextSeq: 0, active: null };
    g[KEY] = s;
  }
  return s;
}

export function defaultInstance(): string {
  return `${hostname()}:${process.pid}`;
}

/** The service name connect() takes when given none: SEMSCOPE_SERVICE, else defaultService(). */
export function implicitService(): string {
  const env = process.env.SEMSCOPE_SERVICE;
  return env === undefined || env === "" ? defaultService() : env;
}

/** How far up from the main script a package.json is looked for. */
const PACKAGE_SEARCH_DEPTH = 8;

/**
 * The service name when neither the option nor SEMSCOPE_SERVICE gives one: the `name` of the
 * package.json nearest the main script (what a service is usually called), else the main
 * script's file name without extension, else "node".
 */
export function defaultService(mainScript: string | undefined = process.argv[1]): string {
  if (mainScript === undefined || mainScript === "") return "node";
  const script = resolve(mainScript);
  let dir = dirname(script);
  for (let i = 0; i < PACKAGE_SEARCH_DEPTH; i++) {
    const name = packageName(join(dir, "package.json"));
    if (name !== undefined) return name;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  const file = basename(script, extname(script));
  return file !== "" ? file : "node";
}

function packageName(path: string): string | undefined {
  try {
    const pkg = JSON.parse(readFileSync(path, "utf8")) as { name?: unknown };
    return typeof pkg.name === "string" && pkg.name !== "" ? pkg.name : undefined;
  } catch {
    return undefined;
  }
}
