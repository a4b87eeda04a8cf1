// Shared by the adapter tests: unique names, events per adapter, handles untracked after each test,
// and liveness polling (a generous deadline, never a timing assertion).
import { afterEach } from "vitest";
import { onEvent, type AgentEvent, type InstrumentHandle } from "../../../agent/src/index.js";

let seq = 0;
export const uniqueName = (prefix: string): string => `${prefix}-${++seq}-${Math.random().toString(36).slice(2, 8)}`;

const events: AgentEvent[] = [];
onEvent((e) => events.push(e));
export const eventsOf = (h: { id: string }, type?: AgentEvent["type"]): AgentEvent[] => events.filter((e) => e.id === h.id && (type === undefined || e.type === type));

const handles: InstrumentHandle[] = [];
/** Untracked after the test, so names never collide and no leak timer outlives it. */
export function tracked<H extends InstrumentHandle>(h: H): H {
  handles.push(h);
  return h;
}
afterEach(() => {
  for (const h of handles.splice(0)) h.untrack();
});

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function until<T>(cond: () => T | undefined | false, what: string, timeoutMs = 5000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = cond();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(5);
  }
}

/** Let promise reactions run. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

/**
 * Tasks that each wait on a gate of their own, and `drain`, which opens the gates one at a time
 * (oldest first) and runs `check` once promise reactions have settled after each.
 */
export function gatedTasks(): { task: () => Promise<void>; drain: (check: () => void) => Promise<void> } {
  const gates: (() => void)[] = [];
  const task = () => new Promise<void>((r) => gates.push(r));
  const drain = async (check: () => void) => {
    while (gates.length > 0) {
      gates.shift()?.();
      await flush();
      check();
    }
  };
  return { task, drain };
}

/** What a rejected promise rejected with (fails the test if it fulfils). */
export async function rejectionOf(p: PromiseLike<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error("expected a rejection");
}

/** What a function threw synchronously. */
export function thrownBy(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error("expected a throw");
}
