// The IPC side every server child shares: CPU time over a measurement window, memory after it.
import type { ChildMessage } from "./messages.js";

export interface ServerHooks {
  extra?(): { historyBytes: number; histories: number };
  hour?(): { bytesPerSemaphore: number; growthPerHour: number; semaphores: number };
  close(): Promise<void>;
}

const post = (m: ChildMessage) => process.send?.(m);
const gc = (globalThis as { gc?: () => void }).gc;

export function serve(url: string, hooks: ServerHooks): void {
  let cpu0 = process.cpuUsage();
  let wall0 = performance.now();
  process.on("message", (raw) => {
    const m = raw as { cmd: string };
    if (m.cmd === "mark") {
      cpu0 = process.cpuUsage();
      wall0 = performance.now();
    } else if (m.cmd === "report") {
      const cpu = process.cpuUsage(cpu0);
      const wallMs = performance.now() - wall0;
      // After the window, so the forced GC is not charged to it.
      gc?.();
      const { rss, heapUsed } = process.memoryUsage();
      post({ type: "report", cpuUs: cpu.user + cpu.system, wallMs, rss, heapUsed, ...hooks.extra?.() });
    } else if (m.cmd === "hour" && hooks.hour) {
      post({ type: "hour", ...hooks.hour() });
    } else if (m.cmd === "close") {
      void hooks.close().then(() => process.exit(0));
    }
  });
  process.on("disconnect", () => process.exit(0));
  post({ type: "listening", url });
}
