// One registry per process, even when two copies of the agent are loaded (a duplicated
// node_modules): names stay unique process-wide and one reporter sees every semaphore.
import type { AgentEvent, Sample, SemaphoreInfo } from "../../shared/protocol/types.js";
import type { FlightRecorder } from "./flight-recorder.js";

/** Anything the reporter can describe and sample: our Semaphore and every adapter. */
export interface Tracked {
  readonly id: string;
  describe(): SemaphoreInfo;
  /** The interval's sample: gauges at `nowEpochMs`, counts since the previous call. */
  sample(nowEpochMs: number): Sample;
  /** Its flight recorder, if it keeps one: the reporter sends it when the hub asks. */
  readonly flightRecorder?: FlightRecorder;
  /**
   * Optional: true when sample() now would report nothing new since the previous call (no
   * operation, no waiter, the same cap and permits in use), so a reporter sending changed
   * entries only can skip it without sampling. Without it, the reporter samples and compares.
   */
  unchangedSinceSample?(): boolean;
}

export type EventListener = (event: AgentEvent) => void;

/** Events raised while no reporter listens are kept, up to this many (oldest dropped, counted). */
export const PENDING_EVENTS_MAX = 1000;

interface Registry {
  readonly tracked: Map<string, Tracked>;
  readonly listeners: Set<EventListener>;
  readonly changeListeners: Set<() => void>;
  pending: AgentEvent[];
  droppedEvents: number;
}

const KEY = Symbol.for("semscope-agent.registry.v1");

function registry(): Registry {
  const g = globalThis as unknown as Record<symbol, Registry | undefined>;
  let r = g[KEY];
  if (r === undefined) {
    r = { tracked: new Map(), listeners: new Set(), changeListeners: new Set(), pending: [], droppedEvents: 0 };
    g[KEY] = r;
  }
  return r;
}

export function register(t: Tracked): void {
  const r = registry();
  if (r.tracked.has(t.id)) {
    throw new Error(`a semaphore named "${t.id}" already exists in this process: names must be unique (close the old one first)`);
  }
  r.tracked.set(t.id, t);
  notifyChange(r);
}

export function unregister(t: Tracked): void {
  const r = registry();
  if (r.tracked.get(t.id) === t) {
    r.tracked.delete(t.id);
    notifyChange(r);
  }
}

export function isNameTaken(id: string): boolean {
  return registry().tracked.has(id);
}

export function trackedAll(): Tracked[] {
  return [...registry().tracked.values()];
}

function notifyChange(r: Registry): void {
  for (const l of r.changeListeners) safeCall(() => l());
}

export function onTrackedChange(listener: () => void): () => void {
  const r = registry();
  r.changeListeners.add(listener);
  return () => r.changeListeners.delete(listener);
}

export function emitEvent(event: AgentEvent): void {
  const r = registry();
  if (r.listeners.size === 0) {
    if (r.pending.length >= PENDING_EVENTS_MAX) {
      r.pending.shift();
      r.droppedEvents++;
    }
    r.pending.push(event);
    return;
  }
  for (const l of r.listeners) safeCall(() => l(event));
}

/** Subscribe to events; events raised before anyone listened are delivered first. */
export function onEvent(listener: EventListener): () => void {
  const r = registry();
  r.listeners.add(listener);
  const pending = r.pending;
  r.pending = [];
  for (const e of pending) safeCall(() => listener(e));
  return () => r.listeners.delete(listener);
}

// A listener's bug must never surface inside the host's acquire() or release().
function safeCall(f: () => void): void {
  try {
    f();
  } catch {
    /* swallowed on purpose: the agent never throws into its host */
  }
}
