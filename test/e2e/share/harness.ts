// Replicas sharing a budget, each a child process (fixtures/replica.ts) running the real agent on
// a real Redis and streaming to a hub; IPC to make them hold permits and to read what they see.
import { fileURLToPath } from "node:url";
import { forkChild, START_TIMEOUT_MS, type Child } from "../stream/harness.js";
import type { ShareMessage } from "./fixtures/messages.js";

const REPLICA = fileURLToPath(new URL("./fixtures/replica.ts", import.meta.url));

export type Replica = Child<ShareMessage> & { instance: string; agentId: string };

export interface ReplicaConfig {
  hubUrl: string;
  redisUrl: string;
  service: string;
  budget: number;
  leaseMs: number;
  heartbeatMs: number;
  intervalMs: number;
  /** coordinator.turnMs (the agent's default when absent). */
  turnMs?: number;
}

/** Resolves once the replica's agent is connected to the hub. */
export async function startReplica(cfg: ReplicaConfig, instance: string): Promise<Replica> {
  const c = forkChild<ShareMessage>(
    REPLICA,
    {
      HUB_URL: cfg.hubUrl,
      REDIS_URL: cfg.redisUrl,
      SERVICE: cfg.service,
      INSTANCE: instance,
      INTERVAL_MS: String(cfg.intervalMs),
      BUDGET: String(cfg.budget),
      LEASE_MS: String(cfg.leaseMs),
      HEARTBEAT_MS: String(cfg.heartbeatMs),
      ...(cfg.turnMs !== undefined ? { TURN_MS: String(cfg.turnMs) } : {}),
    },
    { label: `replica ${instance}`, stderrTail: 4000 },
  );
  const ready = await c.next("ready", START_TIMEOUT_MS);
  await c.next("connected", START_TIMEOUT_MS);
  return Object.assign(c, { instance, agentId: ready.agentId });
}
