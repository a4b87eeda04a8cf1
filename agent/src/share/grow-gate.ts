// When a replica may take a larger share. Shrinking is applied at once; growing waits until the
// larger share has been the answer for a whole lease period, so every other live replica has
// heartbeated (and shrunk) or lost its lease before this one takes the permits they gave up.
// A failed heartbeat restarts the wait: an unreachable coordinator never lets a share grow.

export class GrowGate {
  /** (time, target) of each answer since the cap last stopped being below the target, oldest first. */
  private streak: { t: number; target: number }[] = [];

  constructor(private readonly holdMs: number) {}

  /**
   * The cap to apply after the coordinator answered `target` at `now` (ms, monotonic) while the
   * cap is `cap`: the target when it is not larger; otherwise the smallest target answered over
   * the last holdMs, once answers cover that long; else the cap unchanged.
   */
  next(cap: number, target: number, now: number): number {
    if (target <= cap) {
      this.streak = [];
      return target;
    }
    const s = this.streak;
    s.push({ t: now, target });
    // Keep the newest answer at or before the window's start: it proves the window is covered.
    const from = now - this.holdMs;
    while (s.length > 1 && s[1].t <= from) s.shift();
    if (s[0].t > from) return cap;
    let least = target;
    for (const a of s) if (a.target < least) least = a.target;
    if (least <= cap) return cap;
    // The cap is now `least`: only the answers above it since the last one at it still wait.
    let last = -1;
    for (let i = 0; i < s.length; i++) if (s[i].target <= least) last = i;
    this.streak = s.slice(last + 1);
    return least;
  }

  /** A heartbeat failed: whatever was waiting to grow waits a whole period again. */
  reset(): void {
    this.streak = [];
  }

  /** Whether a larger share is waiting out its period. */
  get waiting(): boolean {
    return this.streak.length > 0;
  }
}
