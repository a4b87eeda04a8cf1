// The dashboard's side of `/replay` (docs/protocol.md, "Replay"): a hub that serves a recording
// (its snapshot's hub version ends in "+replay") gives the timeline here and takes the cursor's
// controls. The data itself still comes through /ui (ui-client.ts).
import { io, type Socket } from "socket.io-client";
import { PROTOCOL_VERSION, type Ack } from "../../../shared/protocol/types.js";
import { REPLAY_NAMESPACE, type HubToReplayEvents, type ReplayStatus, type ReplayToHubEvents } from "../../../shared/ui-protocol/replay.js";
import type { HubTarget } from "../data/hub-target.js";

interface LooseEmitter {
  timeout(ms: number): { emitWithAck(event: string, payload: unknown): Promise<unknown> };
}

export class ReplayClient {
  private socket: Socket<HubToReplayEvents, ReplayToHubEvents> | null = null;
  private state: ReplayStatus | null = null;
  /**
   * +1 whenever the cursor has jumped (a seek the hub acknowledged): views keyed on it reload
   * their history then, from the hub already at the new moment.
   */
  private jumps = 0;
  private version = 0;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly target: HubTarget) {}

  get status(): ReplayStatus | null {
    return this.state;
  }

  get epoch(): number {
    return this.jumps;
  }

  getVersion = (): number => this.version;

  subscribe = (fn: () => void): (() => void) => {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  };

  start(): void {
    if (this.socket !== null) return;
    const token = this.target.token;
    const socket: Socket<HubToReplayEvents, ReplayToHubEvents> = io(`${this.target.url}${REPLAY_NAMESPACE}`, {
      auth: token !== null ? { protocol: PROTOCOL_VERSION, token } : { protocol: PROTOCOL_VERSION },
      forceNew: true,
      // Until the first status: a hub that refuses the namespace is not a replay hub after all.
      reconnection: false,
    });
    this.socket = socket;
    socket.on("replay:status", (s) => {
      if (!socket.io.opts.reconnection) socket.io.reconnection(true);
      this.apply(s);
    });
    socket.on("connect_error", () => {
      if (this.state === null) this.stop();
    });
  }

  stop(): void {
    this.socket?.removeAllListeners();
    this.socket?.disconnect();
    this.socket = null;
  }

  seek(t: number): Promise<void> {
    return this.send("replay:seek", { t: Math.round(t) }, true);
  }

  /** Moves the cursor to where `alert` was raised: its mark on the timeline (hub time), else its raisedAt. */
  seekToAlert(alert: { id: string; raisedAt: number }): Promise<void> {
    return this.seek(this.state?.marks.find((m) => m.id === alert.id)?.at ?? alert.raisedAt);
  }

  play(speed: number): Promise<void> {
    return this.send("replay:play", { speed });
  }

  pause(): Promise<void> {
    return this.send("replay:pause", {});
  }

  /** Saves [from, to] of the recording under `name`; resolves to the file written. */
  async save(name: string, from: number, to: number): Promise<string> {
    const socket = this.socket;
    if (socket === null) throw new Error("not connected");
    const ack = (await (socket as unknown as LooseEmitter).timeout(60_000).emitWithAck("replay:save", { name, from: Math.round(from), to: Math.round(to) })) as Ack<{ file: string }>;
    if (!ack.ok) throw new Error(ack.error);
    return ack.file;
  }

  /** When the first alert after the cursor was raised (hub time), or null. */
  nextAlertAt(): number | null {
    const s = this.state;
    if (s === null) return null;
    const next = s.marks.find((m) => m.at > s.cursor);
    return next === undefined ? null : next.at;
  }

  private async send(event: keyof ReplayToHubEvents, payload: unknown, jumped = false): Promise<void> {
    const socket = this.socket;
    if (socket === null) return;
    const ack = (await (socket as unknown as LooseEmitter).timeout(10_000).emitWithAck(event, payload)) as Ack<{ status: ReplayStatus }>;
    if (!ack.ok) throw new Error(ack.error);
    if (jumped) this.jumps++;
    this.apply(ack.status);
  }

  private apply(s: ReplayStatus): void {
    this.state = s;
    this.version++;
    for (const fn of this.listeners) fn();
  }
}
