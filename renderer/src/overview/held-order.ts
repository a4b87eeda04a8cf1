// Live re-sorting must not move rows under the user: while the pointer is over the table, or
// for a few seconds after the keyboard moved the selection, the rows keep the order they had
// (their numbers still update, each row reads its own). A change the user makes (filter, sort,
// chip, folding) applies at once; "Resume" (or leaving the table) lets the order catch up.
import { useCallback, useEffect, useRef, useState } from "react";

/** A keyboard selection holds the order this long after the last move. */
export const KEY_HOLD_MS = 5000;

export interface HeldOrder<R> {
  rows: R;
  /** Whether the order shown differs from the data's now. */
  held: boolean;
  /** Props for the table's element: the pointer over it holds the order. */
  tableProps: { onMouseEnter: () => void; onMouseLeave: () => void };
  /** Call when the keyboard moved the selection. */
  keyMoved: () => void;
  /** Let the order catch up now. */
  resume: () => void;
}

/**
 * `rows` as built from the data, or the rows shown when holding began, while it lasts and
 * `userKey` (what the user chose: filter, sort, grouping…) has not changed.
 */
export function useHeldOrder<R extends readonly { id: string }[]>(rows: R, userKey: unknown): HeldOrder<R> {
  const [pointer, setPointer] = useState(false);
  const [keyHold, setKeyHold] = useState(false);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const shown = useRef<{ rows: R; userKey: unknown } | null>(null);
  const holding = pointer || keyHold;
  const keep = holding && shown.current !== null && Object.is(shown.current.userKey, userKey);
  if (!keep) shown.current = { rows, userKey };
  const kept = (shown.current as { rows: R }).rows;
  const held = keep && kept !== rows && (kept.length !== rows.length || kept.some((r, i) => r.id !== rows[i].id));

  useEffect(() => () => {
    if (timer.current !== null) clearTimeout(timer.current);
  }, []);
  const keyMoved = useCallback(() => {
    setKeyHold(true);
    if (timer.current !== null) clearTimeout(timer.current);
    timer.current = setTimeout(() => setKeyHold(false), KEY_HOLD_MS);
  }, []);
  const resume = useCallback(() => {
    if (timer.current !== null) clearTimeout(timer.current);
    setKeyHold(false);
    setPointer(false);
  }, []);
  const tableProps = { onMouseEnter: () => setPointer(true), onMouseLeave: () => setPointer(false) };
  return { rows: kept, held, tableProps, keyMoved, resume };
}
