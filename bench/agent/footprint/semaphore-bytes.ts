// Heap + array-buffer bytes per live, idle semaphore (issue 33): `n` instances made and kept,
// measured after forced full collections, in a fresh child process per sample so no contender's
// leftovers (or the parent's churn) land in another's figure. `idle`: made, never used. `used`:
// each did a few acquire/release pairs first (what a quiet tenant's semaphore looks like).
// `busy`: each did 2,000 pairs first (the flight recorder grown to its capacity).
import { fileURLToPath } from "node:url";
import { Sema } from "async-sema";
import { Semaphore as MutexSemaphore } from "async-mutex";
import pLimit from "p-limit";
import { Semaphore } from "../../../agent/src/index.js";
import { FloorSemaphore } from "../floor.js";
import { numberFromChild } from "../cases/memory.js";

export type Activity = "idle" | "used" | "busy";
const OPS: Record<Activity, number> = { idle: 0, used: 4, busy: 2000 };

interface Kind {
  readonly name: string;
  readonly description: string;
  /** One instance, exercised `ops` times (acquire then release); returns what keeps it alive. */
  make(i: number, ops: number): Promise<unknown>;
}

let seq = 0;
const semscope = (name: string, description: string, flightRecorder: boolean): Kind => ({
  name,
  description,
  async make(i, ops) {
    const s = new Semaphore({ name: `fp-${name}-${++seq}-${i}`, permits: 10, flightRecorder });
    for (let k = 0; k < ops; k++) (await s.acquire()).release();
    return s;
  },
});

export const BYTE_KINDS: readonly Kind[] = [
  semscope("semscope", "Semaphore, default options (flight recorder on)", true),
  semscope("semscope-recorder-off", "Semaphore, flightRecorder: false", false),
  {
    name: "async-sema",
    description: "async-sema Sema",
    async make(_i, ops) {
      const s = new Sema(10);
      for (let k = 0; k < ops; k++) {
        await s.acquire();
        s.release();
      }
      return s;
    },
  },
  {
    name: "async-mutex",
    description: "async-mutex Semaphore",
    async make(_i, ops) {
      const s = new MutexSemaphore(10);
      for (let k = 0; k < ops; k++) (await s.acquire())[1]();
      return s;
    },
  },
  {
    name: "p-limit",
    description: "p-limit limiter",
    async make(_i, ops) {
      const limit = pLimit(10);
      for (let k = 0; k < ops; k++) await limit(() => undefined);
      return limit;
    },
  },
  {
    name: "floor",
    description: "minimal semaphore (bench/agent/floor.ts)",
    async make(_i, ops) {
      const s = new FloorSemaphore(10);
      for (let k = 0; k < ops; k++) {
        await s.acquire();
        s.release();
      }
      return s;
    },
  },
];

function used(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Needs --expose-gc. Bytes per instance of `kind` with `n` of them alive. A few instances move the
 * heap by less than its own noise (a few KB either way), so under 1,000 the figure is the median
 * of SMALL_REPEATS groups of `n`, made one after the other and all kept alive.
 */
export async function measureBytesPerSemaphore(kindName: string, n: number, activity: Activity): Promise<number> {
  if (n >= 1000) return measureGroup(kindName, n, activity);
  const xs: number[] = [];
  for (let r = 0; r < SMALL_REPEATS; r++) xs.push(await measureGroup(kindName, n, activity));
  return xs.sort((a, b) => a - b)[xs.length >> 1]!;
}

const SMALL_REPEATS = 15;
const WARM = 8;
const alive: unknown[] = [];

async function measureGroup(kindName: string, n: number, activity: Activity): Promise<number> {
  const gc = globalThis.gc;
  if (!gc) throw new Error("bytes per semaphore needs node --expose-gc");
  const kind = BYTE_KINDS.find((k) => k.name === kindName);
  if (kind === undefined) throw new RangeError(`unknown kind ${kindName}`);
  // Warm-up, once: the code paths compiled on other instances first. Few enough that their rings
  // leave the shared ring budget to the instances measured.
  if (alive.length === 0) for (let i = 0; i < WARM; i++) alive.push(await kind.make(-1 - i, OPS[activity]));
  const keep = new Array<unknown>(n).fill(undefined);
  await settle();
  gc();
  gc();
  const before = used();
  for (let i = 0; i < n; i++) keep[i] = await kind.make(i, OPS[activity]);
  await settle();
  gc();
  gc();
  const after = used();
  if (keep.some((x) => x === undefined)) throw new Error("lost an instance");
  alive.push(keep);
  return (after - before) / n;
}

const CHILD = fileURLToPath(import.meta.url);

/** One sample in a fresh child process. */
export function bytesPerSemaphoreInChild(kind: string, n: number, activity: Activity): Promise<number> {
  return numberFromChild(CHILD, [kind, String(n), activity], "bytes", `bytes-per-semaphore child ${kind} ${n} ${activity}`);
}

if (process.argv[1] === CHILD) {
  const [kind, nArg, activity] = process.argv.slice(2);
  const bytes = await measureBytesPerSemaphore(kind ?? "", Number(nArg), (activity ?? "idle") as Activity);
  console.log(JSON.stringify({ bytes }));
  process.exit(0);
}
