// Where the start-up warm-ups draw: on the page (so layout and canvases are real) but off its
// left edge, hidden, and as wide as the main column, so what is drawn there has a real view's size.

/** A hidden host off the page (not yet attached); `css` adds to its style. */
export function offscreenHost(css = ""): HTMLDivElement {
  const host = document.createElement("div");
  host.setAttribute("aria-hidden", "true");
  const mainWidth = document.querySelector("main")?.clientWidth ?? window.innerWidth;
  host.style.cssText = `position:fixed;left:-10000px;top:0;width:${mainWidth}px;visibility:hidden;pointer-events:none;${css}`;
  return host;
}
