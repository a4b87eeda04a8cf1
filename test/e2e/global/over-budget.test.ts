// over_budget with real agent processes: four replicas of one service, each with a local cap of 10
// on a semaphore whose fleet-wide budget is 25, add up to 40 and raise over_budget at the hub;
// replicas going away bring the sum to 20, within budget, and the alert resolves.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Alert } from "../../../shared/protocol/index.js";
import { cleanupAll, until } from "../stream/harness.js";
import { alertsOf, startHub, startReplica, stateOf, type Replica } from "./harness.js";

let hubUrl: string;
let replicas: Replica[];

beforeAll(async () => {
  hubUrl = (await startHub()).url;
  replicas = await Promise.all(
    [1, 2, 3, 4].map((i) => startReplica({ MODE: "budget", HUB_URL: hubUrl, SERVICE: "orders", INSTANCE: `o${i}`, CAP: "10", BUDGET: "25", INTERVAL_MS: "250" })),
  );
}, 90_000);
afterAll(cleanupAll);

const overBudget = async (): Promise<Alert | undefined> => (await alertsOf(hubUrl)).find((a) => a.rule === "over_budget" && a.key === "orders/db");

describe("over_budget from real replicas", () => {
  it("is raised when 4 × 10 exceeds a budget of 25, and resolved when replicas go away so the sum is within it", async () => {
    const raised = await until(async () => {
      const a = await overBudget();
      return a !== undefined && a.resolvedAt === null ? a : undefined;
    }, "over_budget raised", 15_000, 50);
    expect(raised).toMatchObject({ rule: "over_budget", severity: "warning", service: "orders", semaphore: "db" });
    const fleet = (await stateOf(hubUrl)).semaphores.filter((s) => s.service === "orders" && s.name === "db");
    expect(fleet.map((s) => s.cap)).toEqual([10, 10, 10, 10]);

    // 30 is still over 25: the alert stays.
    await replicas[0].kill("SIGKILL");
    await until(async () => (await stateOf(hubUrl)).agents.filter((a) => a.connected).length === 3, "the killed replica seen gone", 10_000, 50);
    expect((await overBudget())?.resolvedAt).toBeNull();

    // 20 is within 25: resolved.
    await replicas[1].kill("SIGTERM");
    const resolved = await until(async () => {
      const a = await overBudget();
      return a !== undefined && a.resolvedAt !== null ? a : undefined;
    }, "over_budget resolved", 15_000, 50);
    expect(resolved.id).toBe(raised.id);
    expect(resolved.resolvedAt).toBeGreaterThanOrEqual(raised.raisedAt);
  }, 60_000);
});
