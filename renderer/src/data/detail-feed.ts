// The data behind one detail view (a semaphore, or a fleet of replicas): a history window
// loaded once, then kept current. A semaphore on the 1 s tier appends each delta's sample (no
// request per second); the 1 m tier and fleets poll for rows newer than the last one. Paused or
// pinned at an alert, nothing moves; resuming reloads the window, which catches up on whatever
// arrived meanwhile. Charts subscribe to it (ChartFeed) and redraw in the next frame.
import type uPlot from "uplot";
import type { UiLimitChange, UiSemaphore, UiWindow } from "../../../shared/ui-protocol/types.js";
import type { ChartFeed, Level, Marker } from "../charts/chart-spec.js";
import { limitMarker, mergeLimitChanges } from "../logic/limit-changes.js";
import { DETAIL_COLUMNS, liveRow, type DetailColumn } from "../logic/live-row.js";
import { historyRange, type HistoryRange, type Pin } from "../logic/time-window.js";
import type { DashboardStore } from "./dashboard-store.js";
import { startPrefetch, takePrefetch } from "./history-prefetch.js";
import { SeriesBuffer } from "./series-buffer.js";
import type { UiClient } from "./ui-client.js";
import { errorText } from "../logic/error-text.js";

export type DetailTarget = { kind: "semaphore"; key: string } | { kind: "fleet"; service: string; name: string };

export interface FeedStatus {
  loading: boolean;
  error: string | null;
  tier: "1s" | "1m";
  /** null: live. */
  pin: Pin | null;
  /** The window shown, once loaded. */
  range: HistoryRange | null;
}

/** Poll period for targets that cannot append from deltas. */
const POLL_MS = { "1s": 2000, "1m": 15_000 } as const;
/** A live point this many intervals after the previous one means samples were missed: reload. */
const MISSED_INTERVALS = 2.5;

export class DetailFeed implements ChartFeed {
  readonly buffer = new SeriesBuffer<DetailColumn>(DETAIL_COLUMNS, 1000);
  private status: FeedStatus;
  private readonly dataListeners = new Set<() => void>();
  private readonly statusListeners = new Set<() => void>();
  private markerList: Marker[] = [];
  /** An adaptive limit's changes in view, oldest first (the window's `limitChanges`, then live ones; a fleet's name their replica). */
  private limitList: readonly UiLimitChange[] = [];
  /** markerList and a marker per limit change, made when either changes. */
  private allMarkers: readonly Marker[] = [];
  private levelList: Level[] = [];
  private extraVersion = 0;
  private loadSeq = 0;
  private pollTimer: ReturnType<typeof setInterval> | null = null;
  private unsubs: (() => void)[] = [];
  private lastPhase: string;

  constructor(
    private readonly client: UiClient,
    private readonly store: DashboardStore,
    readonly target: DetailTarget,
    private spanMs: number,
    pin: Pin | null,
  ) {
    this.status = { loading: true, error: null, tier: "1s", pin, range: null };
    this.lastPhase = store.connection.phase;
  }

  /** Starts the history request a feed for this target and window is about to make (see history-prefetch.ts). */
  static prefetch(client: UiClient, store: DashboardStore, target: DetailTarget, spanMs: number, pin: Pin | null): void {
    const range = historyRange(spanMs, pin, latestOf(store, target), store.now());
    startPrefetch(prefetchKey(target, spanMs, pin), range, () => fetchWindow(client, target, range));
  }

  // ---- ChartFeed ----

  subscribe(fn: () => void): () => void {
    this.dataListeners.add(fn);
    return () => this.dataListeners.delete(fn);
  }

  version(): number {
    return this.buffer.version + this.extraVersion;
  }

  ready(): boolean {
    return this.status.range !== null;
  }

  data(columns: readonly string[]): uPlot.AlignedData {
    const cols = columns.map((c) => this.buffer.data[c as DetailColumn] ?? []);
    return [this.buffer.t, ...cols] as unknown as uPlot.AlignedData;
  }

  xRange(): [number, number] | null {
    const r = this.status.range;
    if (r === null) return null;
    if (this.status.pin !== null) return [r.from, r.to];
    const end = Math.max(r.to, this.buffer.latestT ?? r.to);
    return [end - this.spanMs, end];
  }

  markers(): readonly Marker[] {
    return this.allMarkers;
  }

  /** The adaptive limit's changes held for the view, oldest first. */
  limitChanges(): readonly UiLimitChange[] {
    return this.limitList;
  }

  levels(): readonly Level[] {
    return this.levelList;
  }

  // ---- React-facing state ----

  subscribeStatus = (fn: () => void): (() => void) => {
    this.statusListeners.add(fn);
    return () => this.statusListeners.delete(fn);
  };

  getStatus = (): FeedStatus => this.status;

  // ---- control ----

  start(): void {
    if (this.target.kind === "semaphore") this.unsubs.push(this.store.onSemaphore(this.target.key, (s) => this.onSample(s)));
    // Back from a disconnect: whatever happened meanwhile is in the history, not in the deltas.
    this.unsubs.push(
      this.store.subscribe("connection", () => {
        const phase = this.store.connection.phase;
        if (phase === "live" && this.lastPhase !== "live") void this.load();
        this.lastPhase = phase;
      }),
    );
    void this.load();
  }

  stop(): void {
    for (const u of this.unsubs) u();
    this.unsubs = [];
    this.stopPolling();
    this.loadSeq++;
  }

  setSpan(spanMs: number): void {
    if (spanMs === this.spanMs) return;
    this.spanMs = spanMs;
    void this.load();
  }

  /** Freeze the charts where they are (the window keeps its end). */
  pause(): void {
    if (this.status.pin !== null) return;
    const end = this.xRange()?.[1] ?? this.buffer.latestT ?? this.store.now();
    this.setStatus({ pin: { end } });
    this.stopPolling();
    this.touch();
  }

  /** Back to live: reload the window, which catches up on everything missed while paused. */
  resume(): void {
    if (this.status.pin === null) return;
    this.setStatus({ pin: null });
    void this.load();
  }

  pinAt(at: number): void {
    const pin = this.status.pin;
    if (pin !== null && "at" in pin && pin.at === at) return;
    this.setStatus({ pin: { at } });
    void this.load();
  }

  setMarkers(markers: Marker[]): void {
    this.markerList = markers;
    this.remark();
    this.touch();
  }

  setLevels(levels: Level[]): void {
    const same = levels.length === this.levelList.length && levels.every((l, i) => l.value === this.levelList[i].value && l.label === this.levelList[i].label);
    if (same) return;
    this.levelList = levels;
    this.touch();
  }

  // ---- internals ----

  private setLimitChanges(changes: readonly UiLimitChange[]): boolean {
    if (changes === this.limitList) return false;
    this.limitList = changes;
    this.remark();
    this.extraVersion++;
    return true;
  }

  private remark(): void {
    this.allMarkers = this.limitList.length === 0 ? this.markerList : [...this.markerList, ...this.limitList.map(limitMarker)];
  }

  private latestT(): number | null {
    return latestOf(this.store, this.target) ?? this.buffer.latestT;
  }

  private fetch(range: HistoryRange): Promise<UiWindow> {
    return fetchWindow(this.client, this.target, range);
  }

  async load(): Promise<void> {
    const seq = ++this.loadSeq;
    this.stopPolling();
    const pre = takePrefetch(prefetchKey(this.target, this.spanMs, this.status.pin));
    const range = pre?.range ?? historyRange(this.spanMs, this.status.pin, this.latestT(), this.store.now());
    this.setStatus({ loading: true, error: null, tier: range.tier });
    // Marks for profiling a detail view's first render (devtools, bench/ui): request → answer.
    performance.mark("semscope:history-request");
    try {
      const win = await (pre?.window ?? this.fetch(range));
      performance.mark("semscope:history-answer");
      if (seq !== this.loadSeq) return;
      this.buffer.load(win, range.tier === "1s" ? 1000 : 60_000);
      this.setLimitChanges(win.limitChanges ?? []);
      // The charts (ready() reads the status) are drawn first, in this task; React re-renders
      // the view around them ("loading" gone) in the next, so the first chart paints without
      // waiting for every panel's render.
      this.status = { ...this.status, loading: false, range };
      this.touch();
      setTimeout(() => {
        if (seq === this.loadSeq) this.setStatus({});
      }, 0);
      if (this.status.pin === null && (this.target.kind === "fleet" || range.tier === "1m")) this.startPolling(range.tier);
      return;
    } catch (err) {
      if (seq !== this.loadSeq) return;
      // No history yet (a semaphore that has not sampled) is an empty chart, not an error.
      const msg = errorText(err);
      this.buffer.clear(range.tier === "1s" ? 1000 : 60_000);
      this.setStatus({ loading: false, range, error: /^no (history|semaphores)/.test(msg) ? null : msg });
    }
    this.touch();
    if (this.status.pin === null && (this.target.kind === "fleet" || range.tier === "1m")) this.startPolling(range.tier);
  }

  private onSample(s: UiSemaphore): void {
    if (this.status.pin !== null || this.status.loading || this.status.tier !== "1s") return;
    if (s.last === null || s.t === null) return;
    const prev = this.buffer.latestT;
    if (prev !== null && s.t <= prev) return;
    // The agent's interval, as the history reported it: a sample's counts are per interval, so
    // rates use it even when a delta was skipped (the gap then shows as a gap).
    const interval = this.buffer.intervalMs;
    if (prev !== null && s.t - prev > MISSED_INTERVALS * interval) {
      // Deltas carry only the latest sample: a burst (an agent catching up) is in the history.
      void this.load();
      return;
    }
    this.buffer.append(s.t, liveRow(s.last, interval), interval);
    this.buffer.trim(s.t - this.spanMs - 5 * interval);
    if (s.last.limit !== undefined) this.setLimitChanges(mergeLimitChanges(this.limitList, [s.last.limit]));
    this.notify();
  }

  private startPolling(tier: "1s" | "1m"): void {
    this.stopPolling();
    this.pollTimer = setInterval(() => void this.poll(), POLL_MS[tier]);
  }

  private stopPolling(): void {
    if (this.pollTimer !== null) clearInterval(this.pollTimer);
    this.pollTimer = null;
  }

  private async poll(): Promise<void> {
    const last = this.buffer.latestT;
    if (last === null) {
      void this.load();
      return;
    }
    const seq = this.loadSeq;
    const tier = this.status.tier;
    try {
      // From the last row itself: on the 1 m tier it is the still-open minute, which changes.
      const win = await this.fetch({ tier, from: last, to: this.store.now() + 60_000 });
      if (seq !== this.loadSeq) return;
      const moreChanges = this.setLimitChanges(mergeLimitChanges(this.limitList, win.limitChanges ?? []));
      if (this.buffer.merge(win) > 0 || moreChanges) {
        this.buffer.trim((this.buffer.latestT ?? last) - this.spanMs - 5 * this.buffer.intervalMs, 4);
        this.notify();
      }
    } catch {
      // A failed poll is retried on the next tick; the banner tells about the connection.
    }
  }

  private setStatus(patch: Partial<FeedStatus>): void {
    this.status = { ...this.status, ...patch };
    for (const fn of [...this.statusListeners]) fn();
  }

  private touch(): void {
    this.extraVersion++;
    this.notify();
  }

  private notify(): void {
    for (const fn of [...this.dataListeners]) fn();
  }
}

function prefetchKey(target: DetailTarget, spanMs: number, pin: Pin | null): string {
  return JSON.stringify([target, spanMs, pin]);
}

/** The latest sample time of the target (a fleet: of its newest replica), null before any. */
function latestOf(store: DashboardStore, target: DetailTarget): number | null {
  if (target.kind === "semaphore") return store.semaphore(target.key)?.t ?? null;
  let latest: number | null = null;
  for (const it of store.itemList()) {
    if (it.service !== target.service || it.name !== target.name || it.t === null) continue;
    if (latest === null || it.t > latest) latest = it.t;
  }
  return latest;
}

async function fetchWindow(client: UiClient, target: DetailTarget, range: HistoryRange): Promise<UiWindow> {
  const columns = [...DETAIL_COLUMNS];
  const { tier, from, to } = range;
  if (target.kind === "semaphore") return (await client.request("history:get", { key: target.key, tier, from, to, columns })).window;
  return (await client.request("fleet:history", { service: target.service, name: target.name, tier, from, to, columns })).window;
}
