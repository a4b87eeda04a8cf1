// Live re-sorting must not move rows under the user: while the pointer is over the table, or
// for a few seconds after the keyboard moved the selection, the rows keep the order they had
// (their numbers still update: each held row is the live one of the same id). A change the user
// makes (filter, sort, chip, folding) applies at once; "Resume" (or leaving the table) lets the
// order catch up. Both lists (semaphores and fleet) hold theirs this way.
import { useCallback, useEffect, useRef, useState } from "react";

/** A keyboard selection holds the order this long after the last move. */
export const KEY_HOLD_MS = 5000;

export interface HeldOrder<T> {
  rows: readonly T[];
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
 * `rows` as built from the data, or in the order shown when holding began, while it lasts and
 * `userKey` (what the user chose: filter, sort, grouping…) has not changed. `idOf` names a row
 * across rebuilds.
 */
export function useHeldOrder<T>(rows: readonly T[], userKey: unknown, idOf: (row: T) => string): HeldOrder<T> {
  const [pointer, setPointer] = useState(false);
  const [keyHold, setKeyHold] = useState(false);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const shown = useRef<{ rows: readonly T[]; userKey: unknown } | null>(null);
  const holding = pointer || keyHold;
  const keep = holding && shown.current !== null && Object.is(shown.current.userKey, userKey);
  if (!keep) shown.current = { rows, userKey };
  const kept = (shown.current as { rows: readonly T[] }).rows;
  let out = kept;
  let held = false;
  if (keep && kept !== rows) {
    held = kept.length !== rows.length || kept.some((r, i) => idOf(r) !== idOf(rows[i]));
    // The order kept, the rows themselves the live ones (a row gone from the data stays as it was).
    const live = new Map(rows.map((r) => [idOf(r), r]));
    out = kept.map((r) => live.get(idOf(r)) ?? r);
  }

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
  return { rows: out, held, tableProps, keyMoved, resume };
}
