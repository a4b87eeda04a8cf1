// Lockdep for async code: remember, per logical task, what it holds; record "A held while B was
// acquired" edges across semaphores; an edge in both directions is a deadlock waiting to happen.
//
// What a task holds travels with it from async resource to async resource (the documented
// executionAsyncResource() propagation pattern). Ownership starts at the acquire() promise: only
// promises chained on it (the `await` or `.then` that receives the permit, and everything created
// from there on) carry the entry. The synchronous run that called acquire() does not, because
// sibling tasks started in that same run share its context, and marking it would make every
// sibling look like a holder (false inversions). A tryAcquire() grant has no promise: it marks the
// current context, and entries made in the current synchronous run are not counted as held by
// a later acquire in that same run, so siblings started there do not produce edges either.
//
// The async hook is installed the first time a semaphore with detectOrderInversions is used; it
// costs what AsyncLocalStorage costs (one property copy per async resource), and only then.
import { createHook, executionAsyncId, executionAsyncResource } from "node:async_hooks";
import type { Permit, StackCapture } from "./permit.js";
import { formatStack, HELD } from "./permit.js";

export interface OrderNode {
  readonly name: string;
  /** Emits the order_inversion event on this semaphore. */
  _reportInversion(holding: string, stack: string): void;
}

export interface OrderEntry {
  readonly sem: OrderNode;
  readonly asyncId: number;
  readonly stack: StackCapture;
  /** Granted synchronously (tryAcquire): held by the context that called it. */
  readonly sync: boolean;
  permit: Permit | undefined;
  dead: boolean;
}

interface Edge {
  stack: StackCapture;
}

const HOLDING = Symbol("semscope.holding");
interface Carrier {
  [HOLDING]?: readonly OrderEntry[];
}

const edges = new Map<OrderNode, Map<OrderNode, Edge>>();
const reported = new Set<string>();

let hooked = false;
/** The entry whose acquire() promise is about to be created; the next promise init takes it. */
let creating: OrderEntry | undefined;
/** acquire() promises by async id: a promise chained on one of them inherits its entry. */
const byPromise = new Map<number, OrderEntry>();
let sweepAt = 1024;

function isLive(e: OrderEntry): boolean {
  return !e.dead && (e.permit === undefined || e.permit._state === HELD);
}

function isHeld(e: OrderEntry): boolean {
  return !e.dead && e.permit !== undefined && e.permit._state === HELD;
}

function withEntry(held: readonly OrderEntry[] | undefined, entry: OrderEntry): OrderEntry[] {
  const next = held === undefined ? [] : held.filter(isLive);
  next.push(entry);
  return next;
}

function ensureHook(): void {
  if (hooked) return;
  hooked = true;
  createHook({
    init(asyncId, type, triggerAsyncId, resource) {
      const held = (executionAsyncResource() as Carrier)[HOLDING];
      if (type === "PROMISE") {
        if (creating !== undefined) {
          byPromise.set(asyncId, creating);
          creating = undefined;
          if (byPromise.size >= sweepAt) sweep();
        } else {
          const owned = byPromise.get(triggerAsyncId);
          if (owned !== undefined) {
            if (isLive(owned)) {
              (resource as Carrier)[HOLDING] = withEntry(held, owned);
              return;
            }
            byPromise.delete(triggerAsyncId);
          }
        }
      }
      if (held !== undefined) (resource as Carrier)[HOLDING] = held;
    },
  }).enable();
}

/** Forget acquire promises whose permit is gone: the map stays as large as what is held or awaited. */
function sweep(): void {
  for (const [id, e] of byPromise) if (!isLive(e)) byPromise.delete(id);
  sweepAt = Math.max(1024, 2 * byPromise.size);
}

/**
 * Called from acquire()/tryAcquire() when the semaphore has detection on; returns the entry to fill
 * at grant. For acquire(), call ownPromise(entry) right before creating the promise it returns.
 */
export function noteAcquire(sem: OrderNode, stack: StackCapture, sync = false): OrderEntry {
  ensureHook();
  const resource = executionAsyncResource() as Carrier;
  const held = resource[HOLDING];
  const asyncId = executionAsyncId();
  if (held !== undefined) {
    for (const h of held) {
      if (h.sem === sem || !isHeld(h) || (h.sync && h.asyncId === asyncId)) continue;
      addEdge(h.sem, sem, stack);
    }
  }
  const entry: OrderEntry = { sem, asyncId, stack, sync, permit: undefined, dead: false };
  if (sync) resource[HOLDING] = withEntry(held, entry);
  return entry;
}

/** The next promise created is the one acquire() returns for this entry. */
export function ownPromise(entry: OrderEntry): void {
  creating = entry;
}

function addEdge(from: OrderNode, to: OrderNode, stack: StackCapture): void {
  let out = edges.get(from);
  if (out === undefined) edges.set(from, (out = new Map()));
  if (!out.has(to)) out.set(to, { stack });
  const reverse = edges.get(to)?.get(from);
  if (reverse === undefined) return;
  const pair = pairKey(from.name, to.name);
  if (reported.has(pair)) return;
  reported.add(pair);
  const text =
    `holding "${from.name}" while acquiring "${to.name}" at:\n${formatStack(stack) ?? "(no stack)"}\n\n` +
    `elsewhere, holding "${to.name}" while acquiring "${from.name}" at:\n${formatStack(reverse.stack) ?? "(no stack)"}`;
  to._reportInversion(from.name, text.length > 16384 ? text.slice(0, 16384) : text);
}

function pairKey(a: string, b: string): string {
  return a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`;
}

/** A closed semaphore takes its edges and reports with it, so a new one with the same name starts clean. */
export function forgetNode(sem: OrderNode): void {
  edges.delete(sem);
  for (const out of edges.values()) out.delete(sem);
  for (const key of reported) {
    const [a, b] = key.split("\u0000");
    if (a === sem.name || b === sem.name) reported.delete(key);
  }
}
