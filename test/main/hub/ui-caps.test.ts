// The /ui caps as options (HubOptions.admission, CLI --max-dashboards… in cli.test.ts): dashboards
// at once in all and per address, and new dashboard connections a second in all and per address.
// A cap set low refuses the next dashboard with the documented reason; a bad value stops the hub.
import { afterEach, describe, expect, it } from "vitest";
import { createHub, HubConfigError } from "../../../main/hub/index.js";
import { cleanupAll, client, startHub } from "./helpers.js";

afterEach(cleanupAll);

/** The connect_error message of a refused /ui handshake from `from`. */
async function refusal(url: string, from: string): Promise<string> {
  try {
    await client(url, "/ui", { from });
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error(`a dashboard from ${from} was admitted`);
}

describe("the /ui caps set by option", () => {
  it("admission.maxDashboardsPerAddress and maxDashboards refuse the next dashboard", async () => {
    const hub = await startHub({ admission: { maxDashboards: 3, maxDashboardsPerAddress: 2 } });
    await client(hub.url, "/ui", { from: "127.0.0.1" });
    await client(hub.url, "/ui", { from: "127.0.0.1" });
    expect(await refusal(hub.url, "127.0.0.1")).toBe("too many dashboards from this address (at most 2)");
    await client(hub.url, "/ui", { from: "127.0.0.2" });
    expect(await refusal(hub.url, "127.0.0.3")).toBe("too many dashboards connected to this hub (at most 3)");
  });

  it("admission.maxDashboards above UI_LIMITS' 32 admits more dashboards than the default", async () => {
    const hub = await startHub({ admission: { maxDashboards: 40, maxDashboardsPerAddress: 40, dashboardHandshakeBurst: 40, dashboardHandshakeBurstPerAddress: 40 } });
    for (let i = 0; i < 40; i++) await client(hub.url, "/ui");
    expect(await refusal(hub.url, "127.0.0.1")).toBe("too many dashboards from this address (at most 40)");
  });

  it("the handshake rates, per address and in all, refuse a burst past them", async () => {
    // Four at once against a burst of 2 at 1 a second: at least one finds the bucket empty.
    const burst = async (url: string, from: (i: number) => string): Promise<string[]> => {
      const tries = await Promise.allSettled([0, 1, 2, 3].map((i) => client(url, "/ui", { from: from(i) })));
      return tries.flatMap((t) => (t.status === "rejected" ? [(t.reason as Error).message] : []));
    };
    const perAddress = await startHub({ admission: { dashboardHandshakesPerSecondPerAddress: 1, dashboardHandshakeBurstPerAddress: 2 } });
    const refusedFromOne = await burst(perAddress.url, () => "127.0.0.1");
    expect(refusedFromOne.length).toBeGreaterThanOrEqual(1);
    expect(new Set(refusedFromOne)).toEqual(new Set(["too many dashboard connections from this address: try again in a few seconds"]));
    // Another address has a bucket of its own.
    await client(perAddress.url, "/ui", { from: "127.0.0.2" });

    const inAll = await startHub({ admission: { dashboardHandshakesPerSecond: 1, dashboardHandshakeBurst: 2 } });
    const refusedInAll = await burst(inAll.url, (i) => `127.0.0.${i + 1}`);
    expect(refusedInAll.length).toBeGreaterThanOrEqual(1);
    expect(new Set(refusedInAll)).toEqual(new Set(["too many dashboard connections: try again in a few seconds"]));
  });

  it("a bad cap stops the hub with a HubConfigError naming it", async () => {
    const bad = [
      [{ maxDashboards: 0 }, "admission.maxDashboards must be an integer in 1..10000, got 0"],
      [{ maxDashboardsPerAddress: 1.5 }, "admission.maxDashboardsPerAddress must be an integer in 1..10000, got 1.5"],
      [{ dashboardHandshakesPerSecond: 20_000 }, "admission.dashboardHandshakesPerSecond must be an integer in 1..10000, got 20000"],
      [{ dashboardHandshakeBurstPerAddress: -1 }, "admission.dashboardHandshakeBurstPerAddress must be an integer in 1..10000, got -1"],
    ] as const;
    for (const [admission, message] of bad) {
      const err = await createHub({ port: 0, log: () => undefined, admission }).then(
        async (hub) => {
          await hub.close();
          return undefined;
        },
        (e: unknown) => e,
      );
      expect(err, message).toBeInstanceOf(HubConfigError);
      expect((err as Error).message).toBe(message);
    }
  });
});
