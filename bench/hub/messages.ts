// What the bench's child processes say over IPC.

export interface ServerReport {
  type: "report";
  /** process.cpuUsage() over the window, microseconds (user + system). */
  cpuUs: number;
  wallMs: number;
  rss: number;
  heapUsed: number;
  /** Collections and event-loop delay over the window (absent in the "idle" report before it). */
  gc?: GcSummary;
  /** hub only: hub.history.bytes() and the histories held. */
  historyBytes?: number;
  histories?: number;
}

export interface GcPauses {
  count: number;
  /** Total pause time (main thread), ms. */
  ms: number;
  maxMs: number;
}

export interface GcSummary {
  minor: GcPauses;
  major: GcPauses;
  incremental: GcPauses;
  /** monitorEventLoopDelay over the window (5 ms resolution), ms. */
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
}

export interface SimReport {
  type: "sim";
  /** Ack latencies (ms) of samples messages sent in the window. */
  latencies: number[];
  itemsAcked: number;
  refused: number;
  timeouts: number;
  connected: number;
  /** This simulator's own CPU time over the window, microseconds. */
  cpuUs: number;
}

export type ChildMessage =
  | { type: "listening"; url: string }
  | { type: "ready"; connected: number }
  | ServerReport
  | SimReport
  | { type: "hour"; bytesPerSemaphore: number; growthPerHour: number; semaphores: number };
