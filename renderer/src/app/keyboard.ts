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
  // The control a pointer pressed last: it keeps focus after the click, but was not reached with the keyboard.
  let clicked: Element | null = null;
  const onKey = (e: KeyboardEvent): void => {
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
    // Enter or Space on a button or link reached with the keyboard is that control's. Enter on
    // one that only has focus because it was clicked is not: it goes to the list, so it opens
    // the selected row rather than pressing the toggle clicked a moment ago again.
    if (e.key === "Tab") clicked = null;
    if ((e.key === "Enter" || e.key === " ") && (e.target instanceof HTMLButtonElement || e.target instanceof HTMLAnchorElement)) {
      if (e.target !== clicked || e.key === " ") return;
      e.preventDefault();
    }
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
  const onPointer = (e: PointerEvent): void => {
    clicked = e.target instanceof Element ? e.target.closest("button, a") : null;
  };
  window.addEventListener("pointerdown", onPointer, true);
  window.addEventListener("keydown", onKey);
  return () => {
    window.removeEventListener("pointerdown", onPointer, true);
    window.removeEventListener("keydown", onKey);
  };
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
