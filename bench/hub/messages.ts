// What the bench's child processes say over IPC.

export interface ServerReport {
  type: "report";
  /** process.cpuUsage() over the window, microseconds (user + system). */
  cpuUs: number;
  wallMs: number;
  rss: number;
  heapUsed: number;
  /** hub only: hub.history.bytes() and the histories held. */
  historyBytes?: number;
  histories?: number;
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
