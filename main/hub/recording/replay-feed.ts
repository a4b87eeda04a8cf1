// Feeds recording lines to a HubCore as the live hub made its calls, with the hub clock set to
// each line's time: the one place a replay (replay-session.ts) turns lines into core calls.
import type { ThresholdsPatch } from "../../../shared/alerts/index.js";
import { DEFAULT_MAX_SEMAPHORES } from "../../../shared/history/index.js";
import { REPLAY_VERSION_SUFFIX } from "../../../shared/ui-protocol/index.js";
import pkg from "../../../package.json" with { type: "json" };
import { HubCore, type AgentRecord } from "../core/hub-core.js";
import type { BufferRecycler } from "./buffer-recycler.js";
import type { AnyRecordLine } from "./recording-line.js";
import type { SegmentStart } from "./recording-rolling.js";
import { pairClosures, StateCopy } from "./state-copy.js";

export interface ReplayCoreOptions {
  /** As the live hub's (HubOptions.maxHistories, maxHistoryBytes); the same defaults. */
  maxHistories?: number;
  maxHistoryBytes?: number;
  version?: string;
}

const HUB_VERSION: string = pkg.version;

/** Where a feed is: what a restore point saves besides the core (replay-checkpoints.ts). */
export interface FeedPlace {
  /** Lines fed (taken from the recording) so far. */
  readonly position: number;
  /** The hub clock. */
  readonly clock: number;
  readonly connection: number;
  /** Lines of a continued segment's preamble still to skip (recording-rolling.ts). */
  readonly skip: number;
}

export class ReplayFeed implements FeedPlace {
  core: HubCore;
  clock: number;
  position = 0;
  connection = 0;
  skip = 0;

  constructor(
    private readonly opts: ReplayCoreOptions,
    clock = 0,
  ) {
    this.clock = clock;
    this.core = this.fresh({});
  }

  /** A core built as a replay's cores are, on this feed's clock. */
  fresh(thresholds: ThresholdsPatch): HubCore {
    this.connection = 0;
    return new HubCore({
      now: () => this.clock,
      version: `${this.opts.version ?? HUB_VERSION}${REPLAY_VERSION_SUFFIX}`,
      thresholds,
      maxHistories: this.opts.maxHistories ?? DEFAULT_MAX_SEMAPHORES,
      ...(this.opts.maxHistoryBytes !== undefined ? { maxHistoryBytes: this.opts.maxHistoryBytes } : {}),
      // The recording says when the hub forgot an agent ("forget" lines).
      forgetAfterMs: 0,
      recorder: undefined,
    });
  }

  /** Back to before the first line, the clock at `clock`. */
  reset(clock: number): void {
    this.clock = clock;
    this.core = this.fresh({});
    this.position = 0;
    this.skip = 0;
  }

  /** To `place`, with `core` (a core as it was there). */
  moveTo(place: FeedPlace, core: HubCore): void {
    this.clock = place.clock;
    this.core = core;
    this.position = place.position;
    this.connection = place.connection;
    this.skip = place.skip;
  }

  /** To where `other` is, with a copy of its core (over `recycler`'s buffers where it has them): a seek that must leave other's alone. */
  copyOf(other: ReplayFeed, recycler?: BufferRecycler): void {
    const fresh = this.fresh({});
    const copy = new StateCopy(pairClosures(other.core, fresh), false, undefined, recycler);
    this.moveTo(other, copy.into(fresh, other.core));
    recycler?.own(this.core, copy.made, copy.instances);
  }

  /** One line taken from the recording: the clock moves to its time and the core gets its call. */
  take(line: AnyRecordLine): void {
    this.position++;
    this.clock = Math.max(this.clock, line.r);
    this.feed(line);
  }

  /** One line into the core: the call the live hub made when it recorded it. */
  feed(line: AnyRecordLine): void {
    if (this.skip > 0) {
      this.skip--;
      return;
    }
    const core = this.core;
    const a = (line as { a?: unknown }).a;
    const agent = (): AgentRecord | undefined => (typeof a === "string" ? core.agent(a) : undefined);
    switch (line.k) {
      case "start": {
        const p = line.p as SegmentStart;
        // A continued segment joined after its predecessor only restates what the core has.
        if (p.continues !== undefined && this.position > 1 && core.registry.agents().length > 0) {
          this.skip = p.preamble ?? 0;
          return;
        }
        // A new hub run: the live hub started from nothing too.
        this.core = this.fresh(p.thresholds as unknown as ThresholdsPatch);
        return;
      }
      case "hello":
        core.hello(++this.connection, line.p as Parameters<HubCore["hello"]>[1]);
        return;
      case "register": {
        const rec = agent();
        if (rec !== undefined) core.register(rec, line.p as Parameters<HubCore["register"]>[1]);
        return;
      }
      case "samples": {
        const rec = agent();
        if (rec !== undefined) core.samples(rec, line.p as Parameters<HubCore["samples"]>[1]);
        return;
      }
      case "events": {
        const rec = agent();
        if (rec !== undefined) core.events(rec, line.p as Parameters<HubCore["events"]>[1]);
        return;
      }
      case "flight": {
        // The ring the agent sent for an alert: attached to it as live (evidence.flight).
        const rec = agent();
        if (rec !== undefined) core.flight(rec, line.p as Parameters<HubCore["flight"]>[1]);
        return;
      }
      case "touch": {
        const rec = agent();
        if (rec !== undefined) core.touch(rec);
        return;
      }
      case "disconnect": {
        const rec = agent();
        if (rec?.owner !== undefined) core.disconnect(rec.owner, rec);
        return;
      }
      case "forget": {
        const rec = agent();
        if (rec !== undefined) core.forget(rec, line.r);
        return;
      }
      case "tick":
        core.tick();
        return;
      case "ack":
        core.acknowledge((line.p as { id: string }).id);
        return;
      case "thresholds":
        try {
          core.setThresholds(line.p as ThresholdsPatch);
        } catch {
          // The live hub refused it too (and recorded nothing); a hand-edited file is skipped here.
        }
        return;
      default:
        // "range" (the saved range's header) and kinds this hub does not know.
        return;
    }
  }
}
