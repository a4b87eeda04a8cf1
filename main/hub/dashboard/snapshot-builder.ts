// The /ui snapshot as JSON text, made a slice at a time: at 10,000 semaphores shaping and
// serialising it takes a few hundred ms, which in one piece held every agent's acks. It is a
// generator (slices.ts): the caller yields to the event loop between slices and sends no delta
// until the build is done, so the snapshot and the deltas after it agree (a semaphore read late in
// the build may be newer than deltaSeq says: the next delta repeats it, by key, with its identity
// where the snapshot's is not the one deltas last sent: UiDeltas.taken). The fleet is the
// fleet view's, with the groups that moved since the last delta recomputed first.
import { WindowScratch } from "../../../shared/history/index.js";
import { UI_LIMITS, type UiFleetEntry } from "../../../shared/ui-protocol/index.js";
import type { HubCore } from "../core/hub-core.js";
import type { FleetView } from "./fleet-view.js";
import { JsonBytes } from "./json-bytes.js";
import { identityOf, type UiIdentity } from "./ui-identity.js";
import { sparkline, uiSemaphore } from "./views.js";

/** Semaphores shaped, or fleet entries written, between two yields. */
const BATCH = 16;

export interface BuiltSnapshot {
  /** The snapshot's JSON, as UTF-8 (json-bytes.ts). */
  readonly json: JsonBytes;
  /** The semaphore keys and the fleet it holds: dashboards holding it know these. */
  readonly keys: readonly string[];
  /** The identity it shows for each of `keys`, in the same order. */
  readonly identities: readonly UiIdentity[];
  /** The keys it gives a config (registered semaphores). */
  readonly configured: readonly string[];
  readonly fleet: readonly UiFleetEntry[];
}

/**
 * Builds the snapshot a slice at a time (run it with slices.ts). `fleetView` is brought up to date
 * first (FleetView.freshen).
 */
export function* buildSnapshot(core: HubCore, deltaSeq: number, deltaIntervalMs: number, fleetView: FleetView): Generator<void, BuiltSnapshot, void> {
  const trackers = [...core.registry.trackers()];
  const hub = JSON.stringify(core.hubInfo());
  const agents = JSON.stringify(core.registry.agents());
  const json = JsonBytes.of(`{"serverTime":${core.now()},"deltaSeq":${deltaSeq},"state":{"hub":${hub},"agents":${agents},"semaphores":[`);
  const pending = core.changes.pending();
  yield* fleetView.freshen(pending.keys, pending.structure);
  const keys: string[] = [];
  const identities: UiIdentity[] = [];
  const configured: string[] = [];
  const sparklines = new JsonBytes();
  const scratch = new WindowScratch();
  for (let i = 0; i < trackers.length; i++) {
    const tracker = trackers[i];
    const key = tracker.key;
    keys.push(key);
    const semaphore = uiSemaphore(core, tracker.figures());
    identities.push(identityOf(semaphore));
    if (semaphore.config !== undefined) configured.push(key);
    json.item(JSON.stringify(semaphore));
    if (sparklines.count < UI_LIMITS.maxSparklines) {
      const line = sparkline(core, key, scratch);
      if (line !== undefined) sparklines.item(`${JSON.stringify(key)}:${JSON.stringify(line)}`);
    }
    if (i % BATCH === BATCH - 1) yield;
  }
  trackers.length = 0;
  const fleet: UiFleetEntry[] = [];
  const fleetJson = new JsonBytes();
  const groups = fleetView.keys();
  for (let i = 0; i < groups.length; i++) {
    const f = fleetView.entry(groups[i])!;
    fleet.push(f);
    fleetJson.item(JSON.stringify(f));
    if (i % BATCH === BATCH - 1) yield;
  }
  const engine = core.engine;
  const limits = { deltaIntervalMs, sparklinePoints: UI_LIMITS.sparklinePoints };
  json.write(`],"alerts":${JSON.stringify(engine.activeAlerts())}},"alertLog":${JSON.stringify(engine.allAlerts())},"fleet":[`);
  json.append(fleetJson);
  json.write(`],"thresholds":${JSON.stringify(engine.thresholds)},"sparklines":{`);
  json.append(sparklines);
  json.write(`},"limits":${JSON.stringify(limits)}}`);
  return { json, keys, identities, configured, fleet };
}
