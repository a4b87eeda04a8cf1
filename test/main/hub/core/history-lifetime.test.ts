// A running hub's history store is long-lived (HistoryStoreOptions.longLived): its rings' memory
// then starts no major collection as they fill
// (test/shared/history/history-store.test.ts shows that part).
import { afterEach, describe, expect, it } from "vitest";
import { HubCore } from "../../../../main/hub/core/hub-core.js";
import { cleanupAll, startHub } from "../helpers.js";

afterEach(cleanupAll);

describe("the hub's history store", () => {
  it("is long-lived in a running hub", async () => {
    const hub = await startHub();
    expect(hub.history.longLived).toBe(true);
  });

  // A replay session makes a core again at each backward seek: its memory must stay V8's to free.
  it("is not, unless asked, in a core made on its own", () => {
    const core = new HubCore({ now: () => 0, version: "t", thresholds: {}, maxHistories: 10, forgetAfterMs: 0, recorder: undefined });
    expect(core.history.longLived).toBe(false);
  });
});
