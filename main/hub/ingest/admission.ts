// Who may join the hub, and how much of it they may hold: agents and semaphores per remote address
// and in all (disconnected agents count, for the 6 h they are kept; the semaphores of an earlier
// run of a service/instance do not, its new run holds the same names), and one live owner per
// agentId and per service/instance. At a cap, agents long disconnected are forgotten first, oldest
// first, to make room; only when every agent held is live is the newcomer refused, with a reason
// in its ack, and counted by cause and, for a cap, by its scope: `address` when the newcomer's own
// address is at its cap (one address flooding: it would be refused on any hub), else `total`
// (the hub is full). Nothing here throws or waits, and nothing a newcomer asks costs more than a
// few steps however many agents are held: agents are found by name, the disconnected ones queue
// in the order they left, and exact recounts wait for the core to have forgotten an agent.
import { agentKey } from "../../../shared/alerts/index.js";
import type { CapScope, Hello, HubAdmission } from "../../../shared/protocol/index.js";
import type { AgentRecord, HubCore } from "../core/hub-core.js";

export interface AdmissionLimits {
  /** Agents held (connected or disconnected) at most. */
  readonly maxAgents: number;
  /** Agents held at most whose last connection came from one remote address. */
  readonly maxAgentsPerAddress: number;
  /** Semaphores held, over all agents, at most. */
  readonly maxSemaphores: number;
  /** Semaphores held at most by the agents of one remote address. */
  readonly maxSemaphoresPerAddress: number;
}

interface Held {
  readonly rec: AgentRecord;
  address: string;
  /** agentKey(service, instance) as indexed in `named` (a hello may rename the agent). */
  name: string;
  /** rec.entries.size when last looked at (sync); 0 while superseded. */
  semaphores: number;
  /**
   * Another agent joined later under the same service/instance (a restart: a new agentId): this
   * record is an earlier run, kept disconnected, whose semaphores are the live run's names. It
   * still counts as an agent (and leaves first to make room) but holds no semaphores for live use.
   */
  superseded: boolean;
}

/**
 * A held agent as it left: current while it is still held, gone, from there, since then. By id,
 * not by record: an entry left behind must not keep a forgotten agent's semaphores in memory.
 */
interface Left {
  readonly agentId: string;
  readonly at: number;
  readonly address: string;
}

/**
 * Agents in the order they left (so by disconnectedAt): the longest gone at the head. Entries
 * that stopped being current (the agent came back, was forgotten or left again) are skipped
 * when met and, once they outnumber the current ones, compacted away.
 */
class LeftQueue {
  private items: Left[] = [];
  private head = 0;

  push(l: Left, current: (l: Left) => boolean, bound: number): void {
    this.items.push(l);
    if (this.items.length - this.head > 2 * bound + 64) {
      this.items = this.items.slice(this.head).filter(current);
      this.head = 0;
    }
  }

  /** The longest gone of the current ones, taken out; undefined when there is none. */
  take(current: (l: Left) => boolean): Left | undefined {
    while (this.head < this.items.length) {
      const l = this.items[this.head++]!;
      if (current(l)) return l;
    }
    this.items = [];
    this.head = 0;
    return undefined;
  }
}

interface AddressTally {
  agents: number;
  semaphores: number;
}

const NONE: Readonly<AddressTally> = { agents: 0, semaphores: 0 };
/** Past a deferred store's longest wait (StorePipeline, 200 ms), so a recount sees what it stored. */
const RECOUNT_MS = 250;

export class Admission {
  readonly refused = { agents: 0, semaphores: 0, identity: 0 };
  /** refused.agents and refused.semaphores by the cap that refused them. */
  readonly refusedScope = { agents: { address: 0, total: 0 }, semaphores: { address: 0, total: 0 } };
  /** Agents forgotten early to make room for a newcomer. */
  evicted = 0;
  /** Connections whose socket is still open: an agent owned by one of them is live. */
  private readonly open = new Set<number>();
  private readonly held = new Map<string, Held>();
  /** Held agents by agentKey(service, instance). */
  private readonly named = new Map<string, Set<Held>>();
  private readonly addresses = new Map<string, AddressTally>();
  /** Disconnected agents in the order they left: all, and per address. */
  private readonly left = new LeftQueue();
  private readonly leftFrom = new Map<string, LeftQueue>();
  private semaphoreTotal = 0;
  private sweptAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly core: HubCore,
    readonly limits: AdmissionLimits,
  ) {}

  opened(connection: number): void {
    this.open.add(connection);
  }

  /** The socket closed: its agent may be taken over by a reconnect at once, before its lane ends. */
  closed(connection: number): void {
    this.open.delete(connection);
  }

  /** Why `hello` on `connection` from `address` is refused, or null (call joined() once it is taken). */
  hello(connection: number, address: string, hello: Hello): string | null {
    const known = this.core.agent(hello.agentId);
    if (known !== undefined && this.liveElsewhere(known, connection)) {
      this.refused.identity++;
      return "agentId already connected: another connection speaks for this agent";
    }
    for (const h of this.named.get(agentKey(hello.service, hello.instance)) ?? []) {
      const rec = h.rec;
      if (rec.agentId === hello.agentId || rec.service !== hello.service || rec.instance !== hello.instance) continue;
      if (this.core.agent(rec.agentId) === rec && this.liveElsewhere(rec, connection)) {
        this.refused.identity++;
        return "service and instance already connected as another agent";
      }
    }
    if (known !== undefined) return null;
    const { maxAgents, maxAgentsPerAddress } = this.limits;
    const fits = () => this.core.agentCount < maxAgents && this.peek(address).agents < maxAgentsPerAddress;
    if (fits()) return null;
    this.recount();
    const atOwnCap = () => this.peek(address).agents >= maxAgentsPerAddress;
    if (!fits()) this.makeRoom(atOwnCap() ? address : undefined, fits);
    if (fits()) return null;
    return this.refuse("agents", atOwnCap() ? "address" : "total", address);
  }

  /** The agent a hello made or resumed, from `address` now. */
  joined(rec: AgentRecord, address: string): void {
    let h = this.held.get(rec.agentId);
    if (h !== undefined && h.rec !== rec) {
      this.drop(h);
      h = undefined;
    }
    if (h === undefined) {
      h = { rec, address, name: agentKey(rec.service, rec.instance), semaphores: 0, superseded: false };
      this.held.set(rec.agentId, h);
      this.index(h);
      this.tally(address).agents++;
    } else {
      if (h.address !== address) this.move(h, address);
      const name = agentKey(rec.service, rec.instance);
      if (h.name !== name) {
        this.unindex(h);
        h.name = name;
        this.index(h);
      }
    }
    this.supersede(h);
  }

  /** `h` is the latest run of its service/instance: the others held under that name stop counting semaphores. */
  private supersede(h: Held): void {
    for (const other of this.named.get(h.name) ?? []) {
      const superseded = other !== h;
      if (other.superseded === superseded) continue;
      other.superseded = superseded;
      this.sync(other);
    }
    this.sync(h);
  }

  /** After the core marked `rec` disconnected (its connection's last message done): it queues to make room. */
  gone(rec: AgentRecord): void {
    const h = this.held.get(rec.agentId);
    if (h === undefined || h.rec !== rec || rec.owner !== undefined || rec.disconnectedAt === null) return;
    const l: Left = { agentId: rec.agentId, at: rec.disconnectedAt, address: h.address };
    const current = (x: Left) => this.current(x) !== undefined;
    this.left.push(l, current, this.held.size);
    let from = this.leftFrom.get(h.address);
    if (from === undefined) this.leftFrom.set(h.address, (from = new LeftQueue()));
    from.push(l, current, this.peek(h.address).agents);
  }

  /**
   * Why a message that may add up to `upTo` semaphores to `rec` is refused, or null. `exactly`
   * counts the ones it would really add, asked only near a cap.
   */
  semaphores(rec: AgentRecord, upTo: number, exactly: () => number): string | null {
    const h = this.held.get(rec.agentId);
    if (h === undefined || upTo <= 0) return null;
    this.sync(h);
    const { maxSemaphores, maxSemaphoresPerAddress } = this.limits;
    let adds = upTo;
    const fits = () => this.semaphoreTotal + adds <= maxSemaphores && this.peek(h.address).semaphores + adds <= maxSemaphoresPerAddress;
    if (fits()) return null;
    adds = exactly();
    if (adds <= 0 || fits()) return null;
    this.recount();
    const pastOwnCap = () => this.peek(h.address).semaphores + adds > maxSemaphoresPerAddress;
    if (!fits()) this.makeRoom(pastOwnCap() ? h.address : undefined, fits);
    if (fits()) return null;
    return this.refuse("semaphores", pastOwnCap() ? "address" : "total", h.address);
  }

  /** Counts a refusal over a cap of `scope` and says why, in words naming the scope. */
  private refuse(what: "agents" | "semaphores", scope: CapScope, address: string): string {
    this.refused[what]++;
    this.refusedScope[what][scope]++;
    const l = this.limits;
    if (what === "agents") {
      return scope === "address"
        ? `agent limit reached: address cap, at most ${l.maxAgentsPerAddress} agents from one address (${address})`
        : `agent limit reached: total cap, this hub holds at most ${l.maxAgents} agents`;
    }
    return scope === "address"
      ? `semaphore limit reached: address cap, at most ${l.maxSemaphoresPerAddress} semaphores from one address (${address})`
      : `semaphore limit reached: total cap, this hub holds at most ${l.maxSemaphores} semaphores`;
  }

  /** After a message added semaphores to `rec`: counted at once, so the next check sees them. */
  settle(rec: AgentRecord): void {
    const h = this.held.get(rec.agentId);
    if (h !== undefined && h.rec === rec) this.sync(h);
  }

  /** For /api/state, /api/stats and /metrics: what is held, the limits, and what was refused. */
  info(): HubAdmission {
    this.sweep();
    return {
      agents: this.core.agentCount,
      semaphores: this.semaphoreTotal,
      limits: { ...this.limits },
      refused: { ...this.refused },
      refusedScope: { agents: { ...this.refusedScope.agents }, semaphores: { ...this.refusedScope.semaphores } },
      evictedAgents: this.evicted,
    };
  }

  /** Owned by a connection other than `connection` whose socket is still open. */
  private liveElsewhere(rec: AgentRecord, connection: number): boolean {
    return rec.owner !== undefined && rec.owner !== connection && this.open.has(rec.owner);
  }

  /** What `address` holds, without making it an entry (a refused address leaves none behind). */
  private peek(address: string): AddressTally {
    return this.addresses.get(address) ?? NONE;
  }

  private tally(address: string): AddressTally {
    let t = this.addresses.get(address);
    if (t === undefined) this.addresses.set(address, (t = { agents: 0, semaphores: 0 }));
    return t;
  }

  /** Brings h's semaphore count to what its record holds now. */
  private sync(h: Held): void {
    const n = h.superseded ? 0 : h.rec.entries.size;
    if (n === h.semaphores) return;
    this.tally(h.address).semaphores += n - h.semaphores;
    this.semaphoreTotal += n - h.semaphores;
    h.semaphores = n;
  }

  private move(h: Held, address: string): void {
    this.untally(h);
    h.address = address;
    const t = this.tally(address);
    t.agents++;
    t.semaphores += h.semaphores;
    this.semaphoreTotal += h.semaphores;
  }

  private untally(h: Held): void {
    const t = this.tally(h.address);
    t.agents--;
    t.semaphores -= h.semaphores;
    this.semaphoreTotal -= h.semaphores;
    if (t.agents <= 0) {
      this.addresses.delete(h.address);
      this.leftFrom.delete(h.address);
    }
  }

  private drop(h: Held): void {
    this.untally(h);
    this.unindex(h);
    this.held.delete(h.rec.agentId);
  }

  private index(h: Held): void {
    let set = this.named.get(h.name);
    if (set === undefined) this.named.set(h.name, (set = new Set()));
    set.add(h);
  }

  private unindex(h: Held): void {
    const set = this.named.get(h.name);
    set?.delete(h);
    if (set?.size === 0) this.named.delete(h.name);
  }

  /** Exact counts again: agents the hub forgot (tick, 6 h) leave, every count is synced. O(agents). */
  private sweep(): void {
    for (const h of this.held.values()) {
      if (this.core.agent(h.rec.agentId) !== h.rec) this.drop(h);
      else this.sync(h);
    }
    this.sweptAt = this.core.now();
  }

  /**
   * At a cap: sweep() when the core forgot an agent held here (its counts still charged), or
   * when the last sweep is older than a deferred store (whose new names are counted only then).
   * Otherwise every count is already exact: each message's are synced as it is stored.
   */
  private recount(): void {
    if (this.held.size !== this.core.agentCount || this.core.now() - this.sweptAt >= RECOUNT_MS) this.sweep();
  }

  /** The agent `l` names if it is still held and still disconnected since it left `l.address`. */
  private current(l: Left): Held | undefined {
    const h = this.held.get(l.agentId);
    if (h === undefined) return undefined;
    const rec = h.rec;
    return h.address === l.address && rec.owner === undefined && rec.disconnectedAt === l.at && this.core.agent(rec.agentId) === rec ? h : undefined;
  }

  /** Forgets disconnected agents (of `address`, or any), longest disconnected first, until `fits`. */
  private makeRoom(address: string | undefined, fits: () => boolean): void {
    const queue = address === undefined ? this.left : this.leftFrom.get(address);
    const current = (l: Left) => this.current(l) !== undefined;
    while (!fits()) {
      const l = queue?.take(current);
      const h = l === undefined ? undefined : this.current(l);
      if (h === undefined) return;
      // Gone from every count at once; its semaphores, alerts and histories a slice per turn.
      this.core.forgetSoon(h.rec, this.core.now());
      this.drop(h);
      this.evicted++;
    }
  }
}
