// A /ui delta or snapshot is built in slices, and an agent's messages land between them: a
// semaphore its agent leaves out of a register and lists again meanwhile. Dashboards that apply
// every delta (the renderer's DashboardStore), one of them from a snapshot taken in between, must
// hold every semaphore the hub has, and no delta may patch one they do not hold.
import { describe, expect, it } from "vitest";
import { HubCore } from "../../../../main/hub/core/hub-core.js";
import { UiDeltas } from "../../../../main/hub/dashboard/delta-builder.js";
import { buildSnapshot } from "../../../../main/hub/dashboard/snapshot-builder.js";
import type { JsonBytes } from "../../../../main/hub/dashboard/json-bytes.js";
import { runToEnd } from "../../../../main/hub/dashboard/slices.js";
import { DashboardStore } from "../../../../renderer/src/data/dashboard-store.js";
import type { UiDelta, UiSnapshot } from "../../../../shared/ui-protocol/index.js";
import { hello, info, sample, T0 } from "../helpers.js";

/** The JSON a dashboard would receive. */
const textOf = (json: JsonBytes): string => runToEnd(json.copyOut("")).toString("utf8");

function setUp() {
  const core = new HubCore({ now: () => T0, version: "t", thresholds: {}, maxHistories: 100, forgetAfterMs: 0, recorder: undefined });
  const rec = core.hello(1, hello("a1"));
  core.register(rec, { semaphores: [info("db"), info("pool")] });
  core.samples(rec, { seq: 1, t: T0, intervalMs: 1000, items: [sample("db"), sample("pool")] });
  const deltas = new UiDeltas(core);
  const store = new DashboardStore();
  const first = runToEnd(buildSnapshot(core, deltas.seq, 250, deltas.fleetView));
  store.applySnapshot(JSON.parse(textOf(first.json)) as UiSnapshot);
  runToEnd(deltas.taken(first, true, true));
  /** Applies the next delta (run to its end) to each store; false when one patched a semaphore it lacks. */
  const apply = (d: UiDelta | undefined, ...stores: DashboardStore[]) => stores.every((s) => d === undefined || s.applyDelta(d));
  const next = () => {
    const built = runToEnd(deltas.build(core.changes.take()));
    return built === undefined ? undefined : (JSON.parse(textOf(built.json)) as UiDelta);
  };
  return { core, rec, deltas, store, apply, next };
}

const keys = (s: DashboardStore) => s.itemList().map((i) => i.key).sort();

describe("deltas and snapshots built while agents register", () => {
  it("a semaphore left out of a register and listed again while a delta is built is carried whole, not also removed", () => {
    const { core, rec, deltas, store, apply, next } = setUp();
    core.samples(rec, { seq: 2, t: T0 + 1000, intervalMs: 1000, items: [sample("db", { inUse: 3 })] });
    core.register(rec, { semaphores: [] });
    const job = deltas.build(core.changes.take());
    // The delta has compared the keys dashboards hold with the registry (both gone) and yielded.
    expect(job.next().done).toBe(false);
    core.register(rec, { semaphores: [info("db")] });
    const built = runToEnd(job);
    const d = JSON.parse(textOf(built!.json)) as UiDelta;
    expect(d.removed).toEqual(["checkout/web-1/pool"]);
    expect(apply(d, store)).toBe(true);
    core.samples(rec, { seq: 3, t: T0 + 2000, intervalMs: 1000, items: [sample("db", { inUse: 4 })] });
    expect(apply(next(), store)).toBe(true);
    expect(keys(store)).toEqual(["checkout/web-1/db"]);
    expect(store.semaphore("checkout/web-1/db")?.inUse).toBe(4);
  });

  it("a semaphore the other dashboards hold and a snapshot lacks comes whole in the next delta", () => {
    const { core, rec, deltas, store, apply, next } = setUp();
    // The dashboards have db from a delta.
    core.samples(rec, { seq: 2, t: T0 + 1000, intervalMs: 1000, items: [sample("db", { inUse: 2 })] });
    expect(apply(next(), store)).toBe(true);
    // Gone while the snapshot is built, back before the next delta.
    core.register(rec, { semaphores: [info("pool")] });
    const built = runToEnd(buildSnapshot(core, deltas.seq, 250, deltas.fleetView));
    const late = new DashboardStore();
    late.applySnapshot(JSON.parse(textOf(built.json)) as UiSnapshot);
    runToEnd(deltas.taken(built, false, false));
    core.register(rec, { semaphores: [info("db"), info("pool")] });
    core.samples(rec, { seq: 3, t: T0 + 2000, intervalMs: 1000, items: [sample("db", { inUse: 5 })] });
    expect(apply(next(), store, late)).toBe(true);
    expect(keys(late)).toEqual(["checkout/web-1/db", "checkout/web-1/pool"]);
    expect(late.semaphore("checkout/web-1/db")?.config).toEqual(store.semaphore("checkout/web-1/db")?.config);
    expect(keys(store)).toEqual(keys(late));
  });
});
