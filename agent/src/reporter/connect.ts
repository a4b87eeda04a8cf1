// connect(): the reporter that streams this process's semaphores to the hub
// (docs/agent-api.md, "Streaming to the app"; docs/protocol.md).
// One interval timer samples everything and buffers the batch whether or not the hub is there;
// the connection delivers buffered batches oldest first whenever it is up.
import { hostname } from "node:os";
import type { Registry } from "prom-client";
import { PAYLOAD_LIMITS } from "../../../shared/protocol/payload-limits.js";
import { FEATURE_CHANGED_ONLY, FEATURE_MANY_SEMAPHORES, LIMITS, semaphoreLimit, type EventsBatch, type Hello, type Register, type SamplesBatch } from "../../../shared/protocol/types.js";
import pkg from "../../package.json" with { type: "json" };
import { onEvent, onTrackedChange, type Tracked } from "../registry.js";
import { BatchBuffer, type Outgoing } from "./batch-buffer.js";
import { Collector } from "./collector.js";
import { resolveOptions, type ConnectOptions, type ResolvedOptions } from "./connect-options.js";
import { Connection, type DownCause } from "./connection.js";
import { EventPipe } from "./event-pipe.js";
import { FlightResponder } from "./flight-responder.js";
import { guard, swallowed } from "./guard.js";
import { processState } from "./identity.js";
import { truncate } from "./sanitize.js";
import { ACK_TIMEOUT_MS, Outbox } from "./outbox.js";
import { jsonBytes, splitIntoGroups } from "./packet-split.js";
import { PrometheusExporter } from "./prometheus.js";
import { OtelBridge, type OtelOptions } from "../otel-metrics.js";

/** close() stops waiting for acks after this long (AGENT-API: "flushes what it can within 2 s"). */
export const CLOSE_FLUSH_MS = 2000;
/** A burst of semaphores created together is registered once, this long after the first. */
const REGISTER_DEBOUNCE_MS = 20;
/** `events` messages kept un-acked while the hub is away, in messages and in bytes. */
const EVENT_BUFFER_MESSAGES = 600;
const EVENT_BUFFER_BYTES = 8 * 1024 * 1024;
/**
 * Where the close code is not telling (a proxy in between), a message this big that was in flight
 * when the connection died this many times is taken for the one the hub closes us over.
 */
const SIZE_SUSPECT_BYTES = 64 * 1024;
const SIZE_SUSPECT_STRIKES = 3;

export interface AgentStatus {
  /** Connected and past hello: batches are flowing. */
  connected: boolean;
  /** The seq the next sample batch will get (process-wide: a later connect() continues it). */
  seq: number;
  /**
   * Sample batches given up on without an ack: oldest dropped from a full buffer, or closed for
   * size. Includes any evicted after being sent, which the hub may have received.
   */
  dropped: number;
  /** Messages the hub refused with ok:false (a refused batch is removed, never retried). */
  rejected: number;
  bufferedBatches: number;
  bufferedBytes: number;
  /** Events lost (buffers full, unusable, or alone too big for a packet). */
  droppedEvents: number;
  bufferedEventMessages: number;
  /** Tracked items not reported: over the hub's limit (1,000; 10,000 with a hub that takes "many_semaphores"), duplicate ids, or describe() throwing. */
  omitted: number;
  /** Times a connection got past hello. */
  connects: number;
  /** The last connection or hub error, for a human to read. */
  lastError: string | null;
}

export interface Agent {
  /** Stable for the life of the process. */
  readonly agentId: string;
  readonly service: string;
  readonly instance: string;
  readonly connected: boolean;
  readonly seq: number;
  readonly dropped: number;
  readonly bufferedBatches: number;
  status(): AgentStatus;
  /** Reports an item outside the registry (a custom adapter); returns its untrack(). */
  track(x: Tracked): () => void;
  /** Prometheus text exposition (0.0.4) of the same numbers, as of the last interval. */
  prometheus(): string;
  /** The same metrics in a prom-client Registry of the agent's own, for Registry.merge(). */
  readonly registry: Registry;
  /** Reports the same numbers as OpenTelemetry instruments on the service's Meter; returns its stop(). */
  otel(options: OtelOptions): () => void;
  /** Stops sampling and flushes what it can within 2 s; resolves, never rejects. */
  close(): Promise<void>;
}

class Reporter implements Agent {
  readonly agentId: string;
  readonly service: string;
  readonly instance: string;
  private readonly opts: ResolvedOptions;
  private readonly collector = new Collector();
  private readonly conn: Connection;
  private readonly samples: Outbox<SamplesBatch>;
  private readonly events: Outbox<EventsBatch>;
  private readonly eventPipe: EventPipe;
  private readonly flight: FlightResponder;
  private readonly exporter: PrometheusExporter;
  private readonly unsubscribe: (() => void)[] = [];
  private readonly otelBridges = new Set<OtelBridge>();
  private readonly tickTimer: ReturnType<typeof setInterval>;
  private registerTimer: ReturnType<typeof setTimeout> | undefined;
  private registeredVersion = -1;
  /** Batches lost since the last one sent: the next batch sent carries it as `dropped`. */
  private droppedSinceSent = 0;
  private droppedTotal = 0;
  private droppedEvents = 0;
  private rejected = 0;
  private closing: Promise<void> | undefined;
  /** The hub accepted "changed_only": batches carry only what changed (kept while the hub is away). */
  private changedOnly = false;
  /** The next interval reports every semaphore: the hub may be new, or have restarted. */
  private fullNext = true;
  private finishClose: (() => void) | undefined;

  constructor(opts: ResolvedOptions) {
    this.opts = opts;
    const identity = processState();
    this.agentId = identity.agentId;
    this.service = opts.service;
    this.instance = opts.instance;
    const hello: Hello = {
      agentId: identity.agentId,
      service: opts.service,
      instance: opts.instance,
      pid: process.pid,
      host: truncate(hostname()),
      runtime: `node ${process.version}`,
      agentVersion: pkg.version,
      startedAt: identity.startedAt,
      features: [FEATURE_CHANGED_ONLY, FEATURE_MANY_SEMAPHORES],
    };
    this.conn = new Connection(
      { url: opts.url, token: opts.token, hello },
      {
        onReady: (features) => this.onReady(features),
        onDown: (cause) => this.onDown(cause),
        onConnectError: () => this.finishClose?.(),
        onFlightRequest: (payload) => this.flight.onRequest(payload),
      },
    );
    // Sent at once, never buffered: a ring is worth having only while its alert is fresh.
    this.flight = new FlightResponder({
      find: (id) => this.collector.find(id),
      send: (record) =>
        this.conn.send("flight", record, ACK_TIMEOUT_MS, (err, ack) => {
          const a = ack as { ok?: unknown; error?: unknown } | undefined;
          if (err === null && a?.ok === false) this.noteRejected(`flight: ${String(a.error)}`);
        }),
    });
    this.samples = new Outbox<SamplesBatch>("samples", new BatchBuffer(opts.bufferBatches, opts.bufferBytes), this.conn, {
      beforeFirstSend: (entry) => {
        if (this.droppedSinceSent > 0) {
          entry.payload.dropped = this.droppedSinceSent;
          this.droppedSinceSent = 0;
        }
      },
      onLost: (entries, why, error) => this.lostSamples(entries, why, error),
      onSettled: () => this.checkFlushed(),
    });
    this.events = new Outbox<EventsBatch>("events", new BatchBuffer(EVENT_BUFFER_MESSAGES, EVENT_BUFFER_BYTES), this.conn, {
      onLost: (entries, why, error) => {
        if (why === "rejected") this.noteRejected(error);
        for (const e of entries) this.droppedEvents += e.payload.items.length;
      },
      onSettled: () => this.checkFlushed(),
    });
    this.eventPipe = new EventPipe(this.events);
    this.exporter = new PrometheusExporter(opts.service, opts.instance, () => {
      const s = this.status();
      return { connected: s.connected, bufferedBatches: s.bufferedBatches, dropped: s.dropped, droppedEvents: s.droppedEvents, rejected: s.rejected };
    });
    this.unsubscribe.push(onTrackedChange(() => this.onTrackedChange()));
    this.unsubscribe.push(onEvent(this.eventPipe.listener));
    // Runs whether or not the hub is reachable: batches are buffered and sent when it is.
    this.tickTimer = setInterval(() => guard(() => this.tick()), opts.intervalMs);
    this.tickTimer.unref();
    this.conn.open();
  }

  get connected(): boolean {
    return this.conn.ready;
  }

  get seq(): number {
    return processState().nextSeq;
  }

  get dropped(): number {
    return this.droppedTotal;
  }

  get bufferedBatches(): number {
    return this.samples.size;
  }

  get registry(): Registry {
    return this.exporter.registry;
  }

  status(): AgentStatus {
    return {
      connected: this.conn.ready,
      seq: processState().nextSeq,
      dropped: this.droppedTotal,
      rejected: this.rejected,
      bufferedBatches: this.samples.size,
      bufferedBytes: this.samples.buffer.bytes,
      droppedEvents: this.droppedEvents + this.eventPipe.lost,
      bufferedEventMessages: this.events.size,
      omitted: this.collector.omitted,
      connects: this.conn.readyCount,
      lastError: this.conn.lastError ?? swallowed.last,
    };
  }

  track(x: Tracked): () => void {
    if (x === null || typeof x !== "object" || typeof x.describe !== "function" || typeof x.sample !== "function" || typeof x.id !== "string") {
      throw new TypeError("agent.track: expects a Tracked ({ id: string, describe(), sample(nowEpochMs) })");
    }
    const untrack = this.collector.track(x);
    this.onTrackedChange();
    return () => guard(() => {
      untrack();
      this.onTrackedChange();
    });
  }

  otel(options: OtelOptions): () => void {
    const meter = (options as Partial<OtelOptions> | undefined)?.meter;
    const methods = ["createCounter", "createHistogram", "createObservableGauge"] as const;
    if (meter === null || typeof meter !== "object" || methods.some((m) => typeof meter[m] !== "function")) {
      throw new TypeError("agent.otel: expects { meter }, an OpenTelemetry Meter (metrics.getMeter(name) from @opentelemetry/api)");
    }
    const bridge = new OtelBridge({ meter, histograms: options.histograms });
    this.otelBridges.add(bridge);
    return () => guard(() => {
      this.otelBridges.delete(bridge);
      bridge.close();
    });
  }

  prometheus(): string {
    try {
      return this.exporter.text();
    } catch {
      return "";
    }
  }

  close(): Promise<void> {
    if (this.closing !== undefined) return this.closing;
    this.closing = new Promise<void>((resolve) => {
      // Ref'd on purpose: the caller awaits close(), and an unref'd wait could let the process
      // exit with the promise unsettled. It holds the process for 2 s at most.
      const deadline = setTimeout(() => guard(() => this.finishClose?.()), CLOSE_FLUSH_MS);
      this.finishClose = () => {
        if (this.finishClose === undefined) return;
        this.finishClose = undefined;
        clearTimeout(deadline);
        guard(() => this.conn.close());
        const state = processState();
        if (state.active === this) state.active = null;
        resolve();
      };
      guard(() => {
        clearInterval(this.tickTimer);
        if (this.registerTimer !== undefined) clearTimeout(this.registerTimer);
        for (const u of this.unsubscribe) u();
        this.conn.noRetry = true;
        // The last, partial interval, and events not yet flushed, go out with the rest.
        this.tick();
        for (const b of this.otelBridges) b.close();
        this.otelBridges.clear();
        this.eventPipe.flush();
        this.eventPipe.stop();
      });
      guard(() => {
        if (this.samples.size === 0 && this.events.size === 0) this.finishClose?.();
        else if (this.conn.phase === "idle") this.conn.open();
      });
    });
    return this.closing;
  }

  // ---- the interval ----

  private tick(): void {
    const t = Date.now();
    // Registered before the batch that first mentions a new semaphore (one socket keeps order).
    this.sendRegisterIfChanged();
    const partial = this.changedOnly && !this.fullNext;
    const items = this.collector.collect(t, partial);
    // Sent whole once a hub has it: a full interval built while away goes to whoever comes next.
    if (!partial && this.conn.ready) this.fullNext = false;
    const live = this.collector.ids();
    this.exporter.update(items, live);
    // A failing SDK must not stop the interval: each bridge is contained on its own.
    for (const b of this.otelBridges) guard(() => b.update(items, live));
    // The hub gets those it was told about in `register`: the first ones (the exporters, all).
    const sent = this.collector.hubItems === items.length ? items : items.slice(0, this.collector.hubItems);
    const state = processState();
    const envelope = jsonBytes({ seq: Number.MAX_SAFE_INTEGER, t, intervalMs: this.opts.intervalMs, items: [], partial: "more" } satisfies SamplesBatch);
    const { groups } = splitIntoGroups(sent, sent.map(jsonBytes), envelope, PAYLOAD_LIMITS.maxSamplesPerBatch);
    // One interval may need several messages; each is its own batch with its own seq, since the
    // hub deduplicates by (agentId, seq). Changed-only batches say which one ends the interval.
    for (let i = 0; i < groups.length; i++) {
      const seq = state.nextSeq++;
      const batch: SamplesBatch = { seq, t, intervalMs: this.opts.intervalMs, items: groups[i]!.items };
      if (partial) batch.partial = i === groups.length - 1 ? "end" : "more";
      this.samples.add(seq, batch, groups[i]!.bytes);
    }
  }

  // ---- connection events ----

  private onReady(features: readonly string[]): void {
    this.changedOnly = features.includes(FEATURE_CHANGED_ONLY);
    this.collector.configure(semaphoreLimit(features), features.includes(FEATURE_MANY_SEMAPHORES));
    this.fullNext = true;
    this.registeredVersion = -1;
    this.sendRegisterIfChanged();
    this.samples.pump();
    this.events.pump();
  }

  private onDown(cause: DownCause): void {
    const inFlight: Outgoing<unknown>[] = [...this.samples.inFlight(), ...this.events.inFlight()];
    const outboxOf = (e: Outgoing<unknown>) => (this.samples.buffer.get(e.key) === e ? this.samples : this.events) as Outbox<unknown>;
    if (cause.closedForSize && inFlight.length > 0) {
      // The hub read up to the packet over its limit; the biggest one in flight is that packet.
      const biggest = inFlight.reduce((a, b) => (b.bytes > a.bytes ? b : a));
      outboxOf(biggest).dropForSize(biggest);
    } else if (cause.transport) {
      for (const e of inFlight) {
        if (e.bytes >= SIZE_SUSPECT_BYTES && ++e.strikes >= SIZE_SUSPECT_STRIKES) outboxOf(e).dropForSize(e);
      }
    }
    this.samples.connectionLost();
    this.events.connectionLost();
    if (this.finishClose !== undefined) this.finishClose();
  }

  private onTrackedChange(): void {
    this.collector.markDirty();
    if (this.registerTimer !== undefined || this.closing !== undefined) return;
    this.registerTimer = setTimeout(() => {
      this.registerTimer = undefined;
      guard(() => this.sendRegisterIfChanged());
    }, REGISTER_DEBOUNCE_MS);
    this.registerTimer.unref();
  }

  private sendRegisterIfChanged(): void {
    if (!this.conn.ready) return;
    const version = this.collector.listVersion;
    if (version === this.registeredVersion) return;
    this.registeredVersion = version;
    const infos = this.collector.infos();
    const envelope = jsonBytes({ semaphores: [], partial: "more" } satisfies Register);
    // One group unless the hub took "many_semaphores" (the collector then cut the list to one packet).
    const { groups } = splitIntoGroups(infos, infos.map(jsonBytes), envelope, LIMITS.maxSemaphoresPerAgent);
    for (let i = 0; i < groups.length; i++) {
      const reg: Register = { semaphores: groups[i]!.items };
      if (groups.length > 1) reg.partial = i === groups.length - 1 ? "end" : "more";
      this.conn.send("register", reg, ACK_TIMEOUT_MS, (err, ack) => {
        const a = ack as { ok?: unknown; error?: unknown } | undefined;
        if (err === null && a?.ok === false) this.noteRejected(`register: ${String(a.error)}`);
      });
    }
  }

  // ---- bookkeeping ----

  private lostSamples(entries: readonly Outgoing<SamplesBatch>[], why: "evicted" | "rejected" | "size", error?: string): void {
    if (why === "rejected") {
      this.noteRejected(error);
      return;
    }
    this.droppedTotal += entries.length;
    // On the wire, `dropped` counts batches the hub cannot have: never sent, or closed for size.
    // One evicted after it was sent but before its ack may have arrived; the hub's seq gap shows
    // it if it did not, and counting it here too would overstate the loss.
    this.droppedSinceSent += why === "size" ? entries.length : entries.filter((e) => !e.everSent).length;
  }

  private noteRejected(error: string | undefined): void {
    this.rejected++;
    if (error !== undefined) this.conn.lastError = `hub refused a message: ${error}`;
  }

  private checkFlushed(): void {
    if (this.finishClose !== undefined && this.samples.size === 0 && this.events.size === 0) this.finishClose();
  }
}

/**
 * Starts streaming every tracked semaphore to the hub. Throws only on bad options, or when an
 * agent is already running in this process (one sample() consumer per process); nothing after
 * that throws into the host.
 */
export function connect(options?: ConnectOptions): Agent {
  const opts = resolveOptions(options);
  const state = processState();
  if (state.active !== null) {
    throw new Error("semscope-agent: connect() called while an agent is already running in this process; close() it first");
  }
  const agent = new Reporter(opts);
  state.active = agent;
  return agent;
}
