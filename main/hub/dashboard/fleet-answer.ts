// The answer to a /ui `fleet:get`: the fleet as fleet() gives it, taken from the fleet view
// (fleet-view.ts) a slice at a time. fleet() in one piece merges every group's histograms in one
// turn of the event loop (long at 10,000 semaphores); the view recomputes only the groups that
// moved since the last delta. Samples stored between the slices move groups again: each round
// recomputes what moved during the one before, and once few moved, the last runs in one piece, so
// the answer is the fleet of one moment. Under a stream too fast for that (rounds that do not
// shrink), the rounds stop: each group is then fleet()'s as of its recompute during the answer.
import type { UiFleetEntry } from "../../../shared/ui-protocol/index.js";
import type { HubCore } from "../core/hub-core.js";
import type { FleetView } from "./fleet-view.js";
import { JsonBytes } from "./json-bytes.js";
import { runToEnd } from "./slices.js";

/** Rounds run a slice at a time, at most. */
const SLICED_ROUNDS = 4;

/** Keys moved during a round few enough to recompute their groups in one piece (a few ms of merging). */
const FEW_KEYS = 64;

/** Fleet entries serialised between two yields. */
const BATCH = 64;

/**
 * Brings `view` up to date with all that changed (a generator: run it with slices.ts) and returns
 * the fleet, sorted by key.
 */
export function* currentFleet(core: HubCore, view: FleetView): Generator<void, UiFleetEntry[], void> {
  const changes = core.changes;
  let round = changes.pending();
  for (let i = 0; i < SLICED_ROUNDS; i++) {
    changes.watch();
    try {
      yield* view.freshen(round.keys, round.structure);
    } finally {
      round = changes.unwatch();
    }
    // A structure change rebuilds the view whole: never in one piece.
    if (!round.structure && round.keys.length <= FEW_KEYS) {
      // Liveness flips are looked for on every call, so one during the rounds is found here too.
      runToEnd(view.freshen(round.keys, false));
      break;
    }
  }
  return view.list();
}

/** The fleet as JSON (an array, as UTF-8: json-bytes.ts), made a few entries per step. */
export function* fleetJson(fleet: readonly UiFleetEntry[]): Generator<void, JsonBytes, void> {
  const items = new JsonBytes("[");
  for (let i = 0; i < fleet.length; i++) {
    items.item(JSON.stringify(fleet[i]));
    if (i % BATCH === BATCH - 1) yield;
  }
  items.write(items.count > 0 ? "]" : "[]");
  return items;
}
