// Frees the backing store of canvases the page has thrown away, a few at a time while it is
// idle. A canvas left to the GC is freed by its pre-finalizer inside a major GC's atomic pause:
// a detail view's charts made that pause 20-30 ms, and it fell in whatever came next (often the
// next detail view opening). Shrunk to 0×0 first, a canvas has nothing left to free there.
import { whenIdle } from "./idle.js";

/** Release work per idle callback, in ms. */
const SLICE_MS = 2;

const queue: HTMLCanvasElement[] = [];
let scheduled = false;

function run(): void {
  scheduled = false;
  const start = performance.now();
  while (queue.length > 0 && performance.now() - start < SLICE_MS) {
    const c = queue.shift();
    if (c === undefined || c.isConnected) continue;
    c.width = 0;
    c.height = 0;
  }
  if (queue.length > 0) schedule();
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  whenIdle(run, 1000);
}

/** Frees these detached canvases' pixels soon, outside the task that detached them. */
export function releaseCanvasesLater(canvases: Iterable<HTMLCanvasElement>): void {
  for (const c of canvases) queue.push(c);
  if (queue.length > 0) schedule();
}

