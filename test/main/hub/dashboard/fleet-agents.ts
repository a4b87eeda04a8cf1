// AGENTS (fleet-steps.ts) as real agents of a hub, each registered with the test's ids, and what
// a step does to them: samples (reconnecting an agent that left), a register, leaving. Shared
// by the /ui tests that run fleet steps against a real hub.
import type { Socket } from "socket.io-client";
import { expect } from "vitest";
import type { Hub } from "../../../../main/hub/index.js";
import type { SemaphoreInfo } from "../../../../shared/protocol/index.js";
import { AGENTS } from "./fleet-steps.js";
import { agent, info, request, sample, summaryOf, T0, type AckAnswer } from "../helpers.js";

export interface FleetAgents {
  /** Samples of `ids` (registered or not) from agent `i`, acknowledged. */
  samples(i: number, ids: readonly string[], inUse: number, waits: readonly number[]): Promise<void>;
  /** Agent `i` registers `semaphores` (nothing when it left), acknowledged. */
  register(i: number, semaphores: readonly SemaphoreInfo[]): Promise<void>;
  leave(i: number): void;
}

export async function fleetAgents(hub: Hub, ids: readonly string[]): Promise<FleetAgents> {
  const sockets: (Socket | undefined)[] = [];
  const seqs = AGENTS.map(() => 0);
  const connect = async (i: number): Promise<Socket> => {
    const a = AGENTS[i];
    return (sockets[i] = await agent(hub, a.agentId, ids.map((id) => info(id, { budget: 25 })), { service: a.service, instance: a.instance }));
  };
  for (let i = 0; i < AGENTS.length; i++) await connect(i);
  return {
    async samples(i, sampled, inUse, waits) {
      const s = sockets[i] ?? (await connect(i));
      const items = sampled.map((id) => sample(id, { inUse, waitMs: summaryOf(...waits) }));
      expect((await request<AckAnswer>(s, "samples", { seq: ++seqs[i], t: T0 + seqs[i] * 1000, intervalMs: 1000, items })).ok).toBe(true);
    },
    async register(i, semaphores) {
      const s = sockets[i];
      if (s !== undefined) expect((await request<AckAnswer>(s, "register", { semaphores })).ok).toBe(true);
    },
    leave(i) {
      sockets[i]?.disconnect();
      sockets[i] = undefined;
    },
  };
}
