// A windowed list: fixed-height rows, only those in view (plus a few either side) in the DOM,
// positioned inside a spacer as tall as the whole list. 500 rows render ~30. Rows are keyed by
// slot (index modulo the window's size), not by identity: scrolling hands a slot's DOM, and its
// sparkline canvas, to the row that enters, instead of unmounting one row and mounting another
// (new canvases are what made scrolling cost in profiles).
import { useEffect, useLayoutEffect, useRef, useState, type ReactNode, type UIEvent } from "react";
import { scrollToReveal, visibleRange } from "../logic/tree.js";

const OVERSCAN = 6;

/**
 * The list's height as last measured, per list (by label): a list mounted again (back from a
 * detail view) starts at it, so the observer's first report changes nothing instead of
 * re-rendering every row a frame after the mount.
 */
const lastViewport = new Map<string, number>();

export interface VirtualListProps<R> {
  rows: readonly R[];
  rowHeight: number;
  /** Index of the selected row; it is scrolled into view when it changes. */
  selected: number;
  renderRow: (row: R, index: number, selected: boolean) => ReactNode;
  initialScrollTop?: number;
  onScrollTop?: (top: number) => void;
  label: string;
}

export function VirtualList<R>({ rows, rowHeight, selected, renderRow, initialScrollTop = 0, onScrollTop, label }: VirtualListProps<R>) {
  const ref = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(initialScrollTop);
  // The window's height bounds the list's: enough rows for the first paint without measuring.
  const [viewport, setViewport] = useState(() => lastViewport.get(label) ?? window.innerHeight);
  const frame = useRef(0);

  useLayoutEffect(() => {
    const el = ref.current;
    if (el === null) return;
    // Each of these forces a layout of the page just mounted (they were most of a return to the
    // overview): scroll only when there is somewhere to go, and take the height from the
    // observer, whose first report comes after the frame's own layout.
    if (initialScrollTop > 0) el.scrollTop = initialScrollTop;
    const ro = new ResizeObserver(() => {
      lastViewport.set(label, el.clientHeight);
      setViewport(el.clientHeight);
    });
    ro.observe(el);
    return () => ro.disconnect();
    // Mount only: initialScrollTop is where the user left the list; later positions are theirs.
  }, []);

  useEffect(() => {
    const el = ref.current;
    if (el === null || selected < 0) return;
    const to = scrollToReveal(selected, el.scrollTop, el.clientHeight, rowHeight);
    if (to !== null) el.scrollTop = to;
  }, [selected, rowHeight]);

  useEffect(() => () => cancelAnimationFrame(frame.current), []);

  const onScroll = (e: UIEvent<HTMLDivElement>) => {
    const top = e.currentTarget.scrollTop;
    // One state update per frame however fast the wheel turns.
    cancelAnimationFrame(frame.current);
    frame.current = requestAnimationFrame(() => {
      setScrollTop(top);
      onScrollTop?.(top);
    });
  };

  const [first, last] = visibleRange(scrollTop, viewport, rowHeight, rows.length, OVERSCAN);
  // Wide enough for any window visibleRange returns at this viewport, so slots never collide;
  // sized for the window, not the list, so the list's first measurement (smaller) keeps every
  // row in its slot rather than moving all of them (a new DOM and canvas for each).
  const slots = Math.ceil(Math.max(viewport, window.innerHeight) / rowHeight) + 2 * OVERSCAN + 2;
  // Children in slot order, so a scroll changes what each slot shows and never moves a node.
  const items: ReactNode[] = new Array<ReactNode>(slots).fill(null);
  for (let i = first; i < last; i++) {
    items[i % slots] = (
      <div key={i % slots} className="vrow" style={{ transform: `translateY(${i * rowHeight}px)`, height: rowHeight }}>
        {renderRow(rows[i], i, i === selected)}
      </div>
    );
  }
  return (
    <div className="vlist" ref={ref} onScroll={onScroll} role="grid" aria-label={label} aria-rowcount={rows.length} tabIndex={-1}>
      <div className="vlist-spacer" style={{ height: rows.length * rowHeight }}>
        {items}
      </div>
    </div>
  );
}
