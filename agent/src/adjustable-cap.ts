// A cap semscope moves: a Semaphore's, or the concurrency of a library that lets it be changed
// (p-limit's, p-queue's): an adaptive limit (`permits: { adaptive }`) fed the hold times measured
// on release, a replica budget's share (`share: "replicas"`), or both, the share then the ceiling.
// A lower cap never stops what holds a permit: the Semaphore (resize) and the libraries (their
// concurrency setters) start nothing new until the running ones are under it.
import { LIMITS, type Sample, type SampleLimit, type SampleLimitChange } from "../../shared/protocol/types.js";
import { AdaptiveCap } from "./adaptive/adaptive-cap.js";
import { checkAdaptive, type CheckedAdaptive } from "./adaptive/adaptive-options.js";
import { ReplicaShare } from "./share/replica-share.js";
import { checkShareOptions, type ShareConfig } from "./share/share-options.js";

/** What moves the cap, checked: both absent for a cap the library alone sets. */
export interface CheckedCapOptions {
  adaptive: CheckedAdaptive | undefined;
  share: ShareConfig | undefined;
}

/** The target's cap, read and written. */
export interface CapTarget {
  cap(): number;
  setCap(cap: number): void;
}

/**
 * Checks `permits: { adaptive }` and `share`/`coordinator`; `adjustable`: whether the adapter can
 * change its target's cap (p-limit, p-queue). For any other target either is refused, naming why.
 */
export function checkCapOptions(pkg: string, name: string, o: { permits?: unknown; share?: unknown; coordinator?: unknown }, budget: number | undefined, adjustable: boolean): CheckedCapOptions {
  const adaptive = checkAdaptive(name, o.permits);
  const share = checkShareOptions(name, o.share, o.coordinator, budget);
  if ((adaptive !== undefined || share !== undefined) && !adjustable) {
    const what = adaptive !== undefined ? "permits: { adaptive }" : 'share: "replicas"';
    throw new TypeError(`instrument(${pkg}) "${name}": ${what} needs a cap semscope can change (p-limit's or p-queue's concurrency); ${pkg}'s is its own`);
  }
  return { adaptive, share };
}

/** Where an adapter's cap starts: 1 under a share (a new replica's share is not known until the others have shrunk), else the adaptive `initial`. */
export function startingCap(o: CheckedCapOptions, current: number): number {
  return o.share !== undefined ? 1 : (o.adaptive?.initial ?? current);
}

export class AdjustableCap {
  readonly adaptive: AdaptiveCap | undefined;
  readonly share: ReplicaShare | undefined;
  /** The adaptive limit's changes that moved the cap since the last sample, oldest first. */
  private pending: SampleLimit[] = [];
  private seen: SampleLimit | undefined;

  /** Sets the target's cap to `initial` (see startingCap) and starts the share's heartbeats. */
  constructor(o: CheckedCapOptions, budget: number | undefined, initial: number, target: CapTarget) {
    const setCap = (n: number): void => {
      if (n !== target.cap()) target.setCap(n);
    };
    setCap(initial);
    if (o.adaptive !== undefined) {
      const adaptive = new AdaptiveCap(o.adaptive, {
        setCap: (n) => {
          this.noteChange(adaptive.lastChange);
          setCap(n);
        },
      });
      this.adaptive = adaptive;
      // "initial limit" is not a change.
      this.seen = adaptive.lastChange;
      if (o.share !== undefined) this.adaptive.setCeiling(initial);
    }
    if (o.share !== undefined) {
      const adaptive = this.adaptive;
      this.share = new ReplicaShare(o.share, budget as number, adaptive === undefined ? { cap: () => target.cap(), setCap } : { cap: () => adaptive.ceiling, setCap: (n) => adaptive.setCeiling(n) });
      this.share.start();
    }
  }

  /** The limit and share blocks for a sample (docs/protocol.md): the last change, with the interval's earlier ones. */
  fill(s: Sample): void {
    if (this.share !== undefined) s.share = this.share.state();
    if (this.adaptive === undefined) return;
    const last = this.adaptive.lastChange;
    const earlier: SampleLimitChange[] = this.pending.filter((c) => c !== last);
    this.pending = [];
    s.limit = earlier.length === 0 ? last : { ...last, earlier: earlier.slice(-LIMITS.maxLimitChanges) };
  }

  /** A change of the limit is reported with the cap it moved (AdaptiveCap calls setCap after keeping it). */
  private noteChange(c: SampleLimit): void {
    if (c === this.seen) return;
    this.seen = c;
    this.pending.push(c);
    if (this.pending.length > LIMITS.maxLimitChanges + 1) this.pending.shift();
  }

  stop(): void {
    void this.share?.stop();
  }
}
