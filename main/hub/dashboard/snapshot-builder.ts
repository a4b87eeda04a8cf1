// The /ui snapshot as JSON text, made a slice at a time: at 10,000 semaphores shaping and
// serialising it takes a few hundred ms, which in one piece held every agent's acks. Each step
// does what fits before a deadline; the caller yields to the event loop between steps and sends
// no delta until the build is done, so the snapshot and the deltas after it agree (a semaphore
// read late in the build may be newer than deltaSeq says: the next delta repeats it, by key).
import { performance } from "node:perf_hooks";
import { WindowScratch } from "../../../shared/history/index.js";
import { UI_LIMITS, type UiFleetEntry } from "../../../shared/ui-protocol/index.js";
import type { HubCore } from "../core/hub-core.js";
import { sparkline, uiFleet, uiSemaphore } from "./views.js";

/** Work done between two yields to the event loop. */
export const SNAPSHOT_SLICE_MS = 8;
/** Semaphores shaped between two looks at the clock. */
const BATCH = 64;

type Tracker = ReturnType<HubCore["registry"]["trackers"]> extends Iterable<infer T> ? T : never;

export interface BuiltSnapshot {
  readonly json: string;
  /** The semaphore keys and the fleet it holds: dashboards holding it know these. */
  readonly keys: readonly string[];
  readonly fleet: readonly UiFleetEntry[];
}

export class SnapshotBuilder {
  private readonly head: string;
  private readonly trackers: Tracker[];
  private next = 0;
  private readonly keys: string[] = [];
  private readonly semaphores: string[] = [];
  private readonly sparklines: string[] = [];
  private readonly scratch = new WindowScratch();
  private result: BuiltSnapshot | undefined;

  constructor(
    private readonly core: HubCore,
    deltaSeq: number,
    private readonly deltaIntervalMs: number,
    /** The fleet as it is (the last delta's, nothing changed since), when the caller has it; else read at the end of the build. */
    private readonly fleet?: readonly UiFleetEntry[],
  ) {
    this.trackers = [...core.registry.trackers()];
    const hub = JSON.stringify(core.hubInfo());
    const agents = JSON.stringify(core.registry.agents());
    this.head = `{"serverTime":${core.now()},"deltaSeq":${deltaSeq},"state":{"hub":${hub},"agents":${agents},"semaphores":[`;
  }

  get done(): BuiltSnapshot | undefined {
    return this.result;
  }

  /** Builds until `deadline` (performance.now()); the snapshot once it is whole. */
  step(deadline: number): BuiltSnapshot | undefined {
    const core = this.core;
    while (this.next < this.trackers.length) {
      const end = Math.min(this.trackers.length, this.next + BATCH);
      for (; this.next < end; this.next++) {
        const tracker = this.trackers[this.next];
        const key = tracker.key;
        this.keys.push(key);
        this.semaphores.push(JSON.stringify(uiSemaphore(core, tracker.state())));
        if (this.sparklines.length >= UI_LIMITS.maxSparklines) continue;
        const line = sparkline(core, key, this.scratch);
        if (line !== undefined) this.sparklines.push(`${JSON.stringify(key)}:${JSON.stringify(line)}`);
      }
      if (performance.now() >= deadline) return undefined;
    }
    return (this.result ??= this.finish());
  }

  private finish(): BuiltSnapshot {
    const engine = this.core.engine;
    const fleet = this.fleet ?? uiFleet(engine.fleet());
    const limits = { deltaIntervalMs: this.deltaIntervalMs, sparklinePoints: UI_LIMITS.sparklinePoints };
    const json =
      `${this.head}${this.semaphores.join(",")}],"alerts":${JSON.stringify(engine.activeAlerts())}},` +
      `"alertLog":${JSON.stringify(engine.allAlerts())},"fleet":${JSON.stringify(fleet)},` +
      `"thresholds":${JSON.stringify(engine.thresholds)},"sparklines":{${this.sparklines.join(",")}},"limits":${JSON.stringify(limits)}}`;
    this.trackers.length = 0;
    this.semaphores.length = 0;
    this.sparklines.length = 0;
    return { json, keys: this.keys, fleet };
  }
}
