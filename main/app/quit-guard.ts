// A clean quit: the first quit request is held until the shell has shut down (alert polling
// stopped, the hub closed and its recording flushed), then quit goes through. A shutdown that
// hangs is given up after a bound, so the app can always be quit.

export const SHUTDOWN_TIMEOUT_MS = 5000;

export type QuitDecision = "allow" | "defer";

export interface QuitGuardOptions {
  /** Everything to do before the process may exit. */
  shutdown: () => Promise<void>;
  /** Ask for the quit again once shutdown is done (Electron: app.quit). */
  requestQuit: () => void;
  timeoutMs?: number;
  log?: (line: string) => void;
}

export class QuitGuard {
  private state: "running" | "closing" | "closed" = "running";
  private readonly timeoutMs: number;

  constructor(private readonly opts: QuitGuardOptions) {
    this.timeoutMs = opts.timeoutMs ?? SHUTDOWN_TIMEOUT_MS;
  }

  get closed(): boolean {
    return this.state === "closed";
  }

  /** Call from `before-quit`: "defer" means preventDefault and wait for the guard to quit. */
  onQuitRequested(): QuitDecision {
    if (this.state === "closed") return "allow";
    if (this.state === "closing") return "defer";
    this.state = "closing";
    void this.runShutdown();
    return "defer";
  }

  private async runShutdown(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), this.timeoutMs);
    });
    try {
      const outcome = await Promise.race([this.opts.shutdown().then(() => "done" as const), timeout]);
      if (outcome === "timeout") this.opts.log?.(`semscope: shutdown took over ${this.timeoutMs} ms; quitting anyway`);
    } catch (err) {
      this.opts.log?.(`semscope: shutdown failed: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      clearTimeout(timer);
      this.state = "closed";
      this.opts.requestQuit();
    }
  }
}
