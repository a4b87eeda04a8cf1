// Mutes live in this browser (localStorage), not in the hub: muting is one person's way of
// quieting the list, acknowledging is the team's. Other tabs see a change through the storage
// event.
import type { Alert } from "../../../shared/protocol/types.js";
import { addMute, mutedUntil, parseMutes, pruneMutes, removeMute, type Mute } from "../logic/mutes.js";

const KEY = "semscope.mutes";

export class MuteStore {
  private mutes: Mute[];
  version = 0;
  private readonly listeners = new Set<() => void>();
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly storage: Storage | null) {
    this.mutes = pruneMutes(parseMutes(this.read()), Date.now());
    window.addEventListener("storage", (e) => {
      if (e.key !== KEY) return;
      this.mutes = parseMutes(e.newValue);
      this.changed(false);
    });
    this.armExpiry();
  }

  subscribe = (fn: () => void): (() => void) => {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  };

  getVersion = (): number => this.version;

  until(alert: Pick<Alert, "rule" | "key">): number | null {
    return mutedUntil(this.mutes, alert, Date.now());
  }

  /** Every mute in force, soonest to end first. */
  inForce(): Mute[] {
    const now = Date.now();
    return this.mutes.filter((m) => m.until > now).sort((a, b) => a.until - b.until);
  }

  mute(alert: Pick<Alert, "rule" | "key">, durationMs: number): void {
    this.mutes = addMute(this.mutes, alert, durationMs, Date.now());
    this.changed(true);
  }

  unmute(alert: Pick<Alert, "rule" | "key">): void {
    this.mutes = removeMute(this.mutes, alert);
    this.changed(true);
  }

  private read(): string | null {
    try {
      return this.storage?.getItem(KEY) ?? null;
    } catch {
      return null;
    }
  }

  private changed(persist: boolean): void {
    if (persist) {
      try {
        this.storage?.setItem(KEY, JSON.stringify(this.mutes));
      } catch {
        // Full or disabled storage: the mute still holds for this page.
      }
    }
    this.version++;
    for (const fn of [...this.listeners]) fn();
    this.armExpiry();
  }

  /** Wake up when the next mute ends, so the counts come back without a reload. */
  private armExpiry(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const now = Date.now();
    let next = Infinity;
    for (const m of this.mutes) if (m.until > now && m.until < next) next = m.until;
    if (!Number.isFinite(next)) return;
    this.timer = setTimeout(() => {
      this.mutes = pruneMutes(this.mutes, Date.now());
      this.changed(true);
    }, Math.min(next - now + 50, 2 ** 31 - 1));
  }
}
