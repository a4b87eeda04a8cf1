// Rule `agent_down`, keyed `<service>/<instance>`, on the hub's clock: a connected agent silent
// for 3 × its intervalMs, or a disconnect. Resolved when it is back (any message).
//
// Several agents can share a key (a process restarted with a fixed instance name: the new one
// may say hello before the old one is noticed gone). The key is down only when none of its
// agents is live and at least one is down, so a restart never reads as an outage.
import { instanceKey } from "../../protocol/types.js";
import type { AlertBook } from "../alert-book.js";
import { fmtMs } from "../format.js";

export interface AgentLiveness {
  readonly agentId: string;
  readonly service: string;
  readonly instance: string;
  /** Socket connected (disconnect clears it; any message sets it). */
  readonly connected: boolean;
  /** Connected and heard from within the silence limit. */
  readonly live: boolean;
  readonly lastSeen: number;
  readonly intervalMs: number;
}

export type DownCause = "silent" | "disconnected";

export function agentKey(service: string, instance: string): string {
  return instanceKey(service, instance);
}

/**
 * Bring the key's alert in line with its agents at `at`. `trigger` is the agent whose change
 * prompted this (its numbers go in the evidence), `cause` why it went down, if it did.
 */
export function evaluateAgentDown(
  book: AlertBook,
  key: string,
  peers: readonly AgentLiveness[],
  at: number,
  trigger: AgentLiveness,
  cause: DownCause | undefined,
  silentIntervals: number,
): void {
  const anyLive = peers.some((a) => a.live);
  const anyDown = peers.some((a) => !a.live);
  const active = book.get("agent_down", key);
  if (!anyLive && anyDown) {
    if (active !== undefined) return;
    const why =
      cause === "silent"
        ? `nothing heard for ${fmtMs(silentIntervals * trigger.intervalMs)} (${silentIntervals} × its ${fmtMs(trigger.intervalMs)} interval)`
        : "disconnected";
    book.raise(
      { key, service: trigger.service, instance: trigger.instance },
      {
        rule: "agent_down",
        severity: "warning",
        message: `${key} is down: ${why}`,
        evidence: { agentId: trigger.agentId, reason: cause ?? "disconnected", lastSeen: trigger.lastSeen, intervalMs: trigger.intervalMs },
      },
      at,
    );
  } else if (active !== undefined) {
    book.resolve("agent_down", key, at, anyLive ? { resolution: "back", backAgentId: peers.find((a) => a.live)?.agentId } : { resolution: "forgotten" });
  }
}
