// One requestAnimationFrame for every chart and sparkline: data may change four times a second
// per semaphore, but each canvas is redrawn at most once per frame, together, outside React.
// A task scheduled twice before the frame runs once; a hidden tab runs nothing and piles up
// nothing (the set holds each task once).

type Task = () => void;

const dirty = new Set<Task>();
let handle = 0;

/** Timings of the last frames' work, for the benchmark and the curious (window.__semscopeFrames). */
export const frameStats = { frames: 0, lastMs: 0, maxMs: 0, totalMs: 0 };

function run(): void {
  handle = 0;
  const start = performance.now();
  const tasks = [...dirty];
  dirty.clear();
  for (const task of tasks) {
    try {
      task();
    } catch (err) {
      // One broken chart must not stop the others from drawing.
      console.error("semscope: a chart failed to draw", err);
    }
  }
  const ms = performance.now() - start;
  frameStats.frames++;
  frameStats.lastMs = ms;
  frameStats.totalMs += ms;
  if (ms > frameStats.maxMs) frameStats.maxMs = ms;
}

let heavyFrame = -1;

/**
 * One heavy job (creating a chart) per frame: a detail view's four charts become four short
 * tasks in consecutive frames instead of one long one. False: someone had this frame; try the next.
 */
export function claimHeavyWork(): boolean {
  if (heavyFrame === frameStats.frames) return false;
  heavyFrame = frameStats.frames;
  return true;
}

export function scheduleFrame(task: Task): void {
  dirty.add(task);
  if (handle === 0) handle = requestAnimationFrame(run);
}

export function cancelFrame(task: Task): void {
  dirty.delete(task);
}
