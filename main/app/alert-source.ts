// Where the shell learns of alerts for notifications and the tray. The local hub's engine is read
// in-process; a remote hub over its HTTP API (GET /api/alerts, bearer token). The hub has no
// alert-change event for in-process listeners yet, so both are polled: once a second is well
// under what a person notices, and reading activeAlerts() is a cheap in-memory copy.
import { z } from "zod";
import type { Alert } from "../../shared/protocol/types.js";

export const LOCAL_POLL_MS = 1000;
export const REMOTE_POLL_MS = 3000;
export const REMOTE_TIMEOUT_MS = 5000;
/** A remote answer larger than this is refused (a hub keeps a bounded alert log). */
export const REMOTE_MAX_BYTES = 8 * 1024 * 1024;

/** Resolves to the active alerts; rejects when the hub cannot be read. */
export type AlertReader = () => Promise<readonly Alert[]>;

export function localAlertReader(engine: { activeAlerts(): Alert[] }): AlertReader {
  return () => Promise.resolve(engine.activeAlerts());
}

const str = z.string().max(4096);
// A remote hub is another machine: its answer is checked like any other input.
const remoteAlertSchema = z.object({
  id: str,
  rule: z.enum(["leak", "convoy", "starvation", "timeouts", "double_release", "agent_down", "over_budget", "order_inversion"]),
  severity: z.enum(["warning", "critical"]),
  key: str,
  service: str,
  instance: str.optional(),
  semaphore: str.optional(),
  message: str,
  raisedAt: z.number(),
  resolvedAt: z.number().nullable(),
  acknowledged: z.boolean(),
  evidence: z.record(z.string(), z.unknown()).optional(),
}) satisfies z.ZodType<Alert>;
const remoteAlertsSchema = z.object({ alerts: z.array(remoteAlertSchema).max(100_000) });

export interface RemoteReaderOptions {
  fetch?: typeof fetch;
  timeoutMs?: number;
}

export function remoteAlertReader(origin: string, token: string | null, opts: RemoteReaderOptions = {}): AlertReader {
  const doFetch = opts.fetch ?? fetch;
  const timeoutMs = opts.timeoutMs ?? REMOTE_TIMEOUT_MS;
  const url = new URL("/api/alerts", origin).href;
  return async () => {
    const res = await doFetch(url, {
      headers: token === null ? {} : { Authorization: `Bearer ${token}` },
      redirect: "error",
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
    const length = Number(res.headers.get("content-length") ?? "0");
    if (length > REMOTE_MAX_BYTES) throw new Error(`GET ${url}: answer too large (${length} bytes)`);
    const text = await readCapped(res, REMOTE_MAX_BYTES, url);
    const parsed = remoteAlertsSchema.safeParse(JSON.parse(text));
    if (!parsed.success) throw new Error(`GET ${url}: not a list of alerts (${parsed.error.issues[0]?.message ?? "invalid"})`);
    return parsed.data.alerts.filter((a) => a.resolvedAt === null);
  };
}

/** The body as text, read a chunk at a time and abandoned once it passes `max` bytes (a chunked answer states no length). */
async function readCapped(res: Response, max: number, url: string): Promise<string> {
  if (res.body === null) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > max) {
      await reader.cancel();
      throw new Error(`GET ${url}: answer too large (over ${max} bytes)`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export type AlertUpdate = { ok: true; alerts: readonly Alert[] } | { ok: false; error: string };

/** Reads every `intervalMs` (never two reads at once) and hands each result on, until stopped. */
export class AlertPoller {
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;

  constructor(
    private readonly read: AlertReader,
    private readonly intervalMs: number,
    private readonly onUpdate: (update: AlertUpdate) => void,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.tick();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async tick(): Promise<void> {
    let update: AlertUpdate;
    try {
      update = { ok: true, alerts: await this.read() };
    } catch (err) {
      update = { ok: false, error: err instanceof Error ? err.message : String(err) };
    }
    if (this.stopped) return;
    try {
      this.onUpdate(update);
    } catch (err) {
      // A failing consumer must not end the polling.
      this.log(`semscope: alert update failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }
}
