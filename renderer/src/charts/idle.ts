// Work that can wait for the page to be idle: start-up warm-ups, freeing thrown-away canvases.

/** Runs `fn` in an idle callback, at the latest after `timeoutMs`; where there is none, soon after. */
export function whenIdle(fn: () => void, timeoutMs: number): void {
  if (typeof window.requestIdleCallback === "function") window.requestIdleCallback(() => fn(), { timeout: timeoutMs });
  else setTimeout(fn, 50);
}
