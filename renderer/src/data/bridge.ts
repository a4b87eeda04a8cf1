// The Electron preload's `window.semscope` (shared/ipc/ipc-contract.ts), when there is one. In a
// plain browser (web mode, dev server) it is absent and every caller falls back to the page's
// own origin and URL.
import { BRIDGE_KEY, type SemscopeBridge } from "../../../shared/ipc/ipc-contract.js";

export function getBridge(): SemscopeBridge | null {
  const b = (window as unknown as Record<string, unknown>)[BRIDGE_KEY] as Partial<SemscopeBridge> | undefined;
  // A bridge of another version would not keep the promises this code relies on.
  if (b === undefined || b === null || b.bridgeVersion !== 1 || typeof b.getConnection !== "function") return null;
  return b as SemscopeBridge;
}
