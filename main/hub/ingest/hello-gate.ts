// Agent connections not yet past hello, which hold a socket and its buffers and give the hub
// nothing: capped per remote address and in all (refused at the /agent handshake, as the /ui caps
// refuse dashboards), and closed when they have not said a hello the hub took in time. An honest
// agent is past hello one round trip after it connects; one refused retries with backoff.
import type { CapScope, HubAdmission } from "../../../shared/protocol/index.js";
import { AddressCounts } from "../socket/address-counts.js";

export interface HelloLimits {
  /** Agent connections at once that have not yet said a hello the hub took, in all. */
  readonly maxPendingAgents: number;
  /** The same, from one remote address. */
  readonly maxPendingAgentsPerAddress: number;
  /** A connection that has not said a hello the hub took this long after it connected is closed. */
  readonly helloTimeoutMs: number;
}

interface Waiting {
  readonly address: string;
  readonly timer: ReturnType<typeof setTimeout>;
}

export class HelloGate {
  /** Handshakes refused over a cap, by the cap's scope. */
  readonly refusedScope: Record<CapScope, number> = { address: 0, total: 0 };
  /** Connections closed for saying no hello in time. */
  timedOut = 0;
  private readonly perAddress = new AddressCounts();
  private readonly waiting = new Map<number, Waiting>();

  constructor(private readonly limits: HelloLimits) {}

  /** Why a new /agent connection from `address` is refused (counted under its cap's scope), or null. */
  refuse(address: string): string | null {
    const l = this.limits;
    if (this.perAddress.of(address) >= l.maxPendingAgentsPerAddress) {
      this.refusedScope.address++;
      return `too many agent connections waiting for hello from this address (at most ${l.maxPendingAgentsPerAddress}): try again in a few seconds`;
    }
    if (this.waiting.size >= l.maxPendingAgents) {
      this.refusedScope.total++;
      return `too many agent connections waiting for hello on this hub (at most ${l.maxPendingAgents}): try again in a few seconds`;
    }
    return null;
  }

  /** Connection `id` from `address` was let in: `expire` closes it unless it is past hello within helloTimeoutMs. */
  opened(id: number, address: string, expire: () => void): void {
    const timer = setTimeout(() => {
      if (!this.settled(id)) return;
      this.timedOut++;
      expire();
    }, this.limits.helloTimeoutMs);
    timer.unref();
    this.waiting.set(id, { address, timer });
    this.perAddress.add(address);
  }

  /** Connection `id` is past hello, or closed: it waits no more. False when it was not waiting. */
  settled(id: number): boolean {
    const w = this.waiting.get(id);
    if (w === undefined) return false;
    clearTimeout(w.timer);
    this.waiting.delete(id);
    this.perAddress.remove(w.address);
    return true;
  }

  /** `admission` with the pending caps, the handshakes refused over them, and the connections closed for no hello. */
  admission(admission: HubAdmission): HubAdmission {
    const { address, total } = this.refusedScope;
    const { maxPendingAgents, maxPendingAgentsPerAddress, helloTimeoutMs } = this.limits;
    const scope = admission.refusedScope;
    return {
      ...admission,
      limits: { ...admission.limits, maxPendingAgents, maxPendingAgentsPerAddress, helloTimeoutMs },
      refused: { ...admission.refused, connections: address + total },
      ...(scope !== undefined ? { refusedScope: { ...scope, connections: { address, total } } } : {}),
      helloTimeouts: this.timedOut,
    };
  }
}
