// Keyboard navigation: one keydown listener for the page. The view on screen registers a
// handler (arrows/j/k to move, Enter to open); the app handles what is global (/ to filter,
// Esc to go back). Keys typed into a text field are left alone, except Esc and arrow-down,
// which leave the field for the list.
import { useEffect, useRef } from "react";

export type KeyHandler = (e: KeyboardEvent) => boolean;

const stack: { current: KeyHandler }[] = [];

function typing(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || target instanceof HTMLTextAreaElement || (target instanceof HTMLInputElement && !["checkbox", "radio", "button"].includes(target.type)) || target instanceof HTMLSelectElement;
}

/** Registers `handler` while the component is mounted; the latest mounted handler goes first. */
export function useKeyHandler(handler: KeyHandler): void {
  const ref = useRef(handler);
  ref.current = handler;
  useEffect(() => {
    const entry = { current: (e: KeyboardEvent) => ref.current(e) };
    stack.push(entry);
    return () => {
      const i = stack.indexOf(entry);
      if (i >= 0) stack.splice(i, 1);
    };
  }, []);
}

export function installKeyboard(global: KeyHandler): () => void {
  const onKey = (e: KeyboardEvent): void => {
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
    // Enter or Space on a focused button or link is that control's, not the list's.
    if ((e.key === "Enter" || e.key === " ") && (e.target instanceof HTMLButtonElement || e.target instanceof HTMLAnchorElement)) return;
    const inField = typing(e.target);
    if (inField && e.key !== "Escape" && e.key !== "ArrowDown" && e.key !== "Enter") return;
    if (inField && e.key === "Escape" && e.target instanceof HTMLElement) {
      e.target.blur();
      e.preventDefault();
      return;
    }
    for (let i = stack.length - 1; i >= 0; i--) {
      if (stack[i].current(e)) {
        e.preventDefault();
        return;
      }
    }
    if (!inField && global(e)) e.preventDefault();
  };
  window.addEventListener("keydown", onKey);
  return () => window.removeEventListener("keydown", onKey);
}

/** j/k and the arrows as a step, or null. */
export function stepOf(e: KeyboardEvent): number | null {
  switch (e.key) {
    case "ArrowDown":
    case "j":
      return 1;
    case "ArrowUp":
    case "k":
      return -1;
    case "PageDown":
      return 10;
    case "PageUp":
      return -10;
    default:
      return null;
  }
}
