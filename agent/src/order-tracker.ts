// Lockdep for async code: remember, per logical task, what it holds; record "A held while B was
// acquired" edges across semaphores; an edge in both directions is a deadlock waiting to happen.
// The held list travels with the task through AsyncLocalStorage. It is set by acquire() in the
// caller's synchronous context, which a sibling task started in that same synchronous run also
// sees: entries made in the current synchronous run (same executionAsyncId) are therefore not
// counted as held by the acquirer, so sibling tasks never produce false edges.
import { AsyncLocalStorage, executionAsyncId } from "node:async_hooks";
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
  permit: Permit | undefined;
  dead: boolean;
}

interface Edge {
  stack: StackCapture;
}

let storage: AsyncLocalStorage<readonly OrderEntry[]> | undefined;
const edges = new Map<OrderNode, Map<OrderNode, Edge>>();
const reported = new Set<string>();

function isLive(e: OrderEntry): boolean {
  return !e.dead && (e.permit === undefined || e.permit._state === HELD);
}

/** Called from acquire() when the semaphore has detection on; returns the entry to fill at grant. */
export function noteAcquire(sem: OrderNode, stack: StackCapture): OrderEntry {
  storage ??= new AsyncLocalStorage();
  const held = storage.getStore() ?? [];
  const asyncId = executionAsyncId();
  for (const h of held) {
    if (h.sem === sem || h.asyncId === asyncId || h.permit === undefined || h.permit._state !== HELD || h.dead) continue;
    addEdge(h.sem, sem, stack);
  }
  const entry: OrderEntry = { sem, asyncId, stack, permit: undefined, dead: false };
  const next = held.filter(isLive);
  next.push(entry);
  storage.enterWith(next);
  return entry;
}

function addEdge(from: OrderNode, to: OrderNode, stack: StackCapture): void {
  let out = edges.get(from);
  if (out === undefined) edges.set(from, (out = new Map()));
  if (!out.has(to)) out.set(to, { stack });
  const reverse = edges.get(to)?.get(from);
  if (reverse === undefined) return;
  const pair = from.name < to.name ? `${from.name}\u0000${to.name}` : `${to.name}\u0000${from.name}`;
  if (reported.has(pair)) return;
  reported.add(pair);
  const text =
    `holding "${from.name}" while acquiring "${to.name}" at:\n${formatStack(stack) ?? "(no stack)"}\n\n` +
    `elsewhere, holding "${to.name}" while acquiring "${from.name}" at:\n${formatStack(reverse.stack) ?? "(no stack)"}`;
  to._reportInversion(from.name, text.length > 16384 ? text.slice(0, 16384) : text);
}

/** A closed semaphore takes its edges with it, so a new one with the same name starts clean. */
export function forgetNode(sem: OrderNode): void {
  edges.delete(sem);
  for (const out of edges.values()) out.delete(sem);
}
