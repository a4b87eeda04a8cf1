// A service restarting under the same service/instance (issue 28, item 4): each restart is a new
// agentId, and the record of the one before stays, disconnected, for hours. What the hub holds for
// live use is the live run's semaphores, once, however many earlier runs are kept.
import { afterEach, describe, expect, it } from "vitest";
import type { ApiHubState } from "../../../shared/protocol/index.js";
import { cleanupAll, startHubChild, startService, until } from "../stream/harness.js";
import { expectAckedInOrder } from "./harness.js";

afterEach(cleanupAll);

async function state(url: string): Promise<ApiHubState> {
  const res = await fetch(`${url}/api/state`);
  expect(res.status).toBe(200);
  return (await res.json()) as ApiHubState;
}

const live = (s: ApiHubState) => s.semaphores.filter((x) => x.service === "restarting").length;

/** Runs the service `runs` times under one service/instance, each run killed once its batches are acked; the last one is left running. */
async function restarts(url: string, runs: number, each: (run: number) => Promise<void>): Promise<void> {
  for (let run = 0; run < runs; run++) {
    const svc = await startService({ url, service: "restarting", instance: "r-1", intervalMs: 250, scenarios: ["steady:5"], notifyAcks: true });
    await until(async () => live(await state(url)) === 5, `run ${run}'s semaphores`, 15_000);
    await expectAckedInOrder(svc);
    await each(run);
    if (run < runs - 1) await svc.kill("SIGKILL");
  }
}

describe("a service restarting under the same service/instance", () => {
  it("counts the live run's semaphores once in admission.semaphores", async () => {
    const hub = await startHubChild();
    await restarts(hub.url, 4, async () => {
      const a = (await state(hub.url)).hub.admission!;
      expect(a.semaphores).toBe(5);
      expect(a.refused.semaphores).toBe(0);
    });
    expect((await state(hub.url)).agents.filter((x) => x.connected).length).toBe(1);
  });
});
