// Replays a recording (recorder.ts) into a fresh AlertEngine: the same calls, in the same order,
// with the same hub times, so the same alerts come out, ids and times included. Stops at the
// first damaged line (a crash can leave the last one half written) and says where.
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { AlertEngine, type AlertChange, type AlertThresholds } from "../../shared/alerts/index.js";
import { agentPayloadSchemas, parsePayload, type Alert } from "../../shared/protocol/index.js";
import { thresholdsPatchSchema } from "../../shared/ui-protocol/index.js";
import type { RecordKind } from "./recorder.js";

export interface ReplayResult {
  /** Every alert the replay raised, in the order raised, each as it ended up. */
  alerts: Alert[];
  /** Lines replayed (blank lines not counted). */
  lines: number;
  /** Hub runs in the file (a hub appending to an existing recording starts a new one). */
  sessions: number;
  /** The first line that could not be replayed, and why; absent when the whole file was. */
  stoppedAt?: { line: number; reason: string };
}

const AGENT_KINDS: ReadonlySet<RecordKind> = new Set(["hello", "register", "samples", "events", "touch", "disconnect", "forget"]);

/** Feeds recording lines to engines, one engine per hub session. */
export class Replayer {
  private engine = new AlertEngine();
  private session = 0;
  private readonly alerts = new Map<string, Alert>();
  lines = 0;

  /** Replays one line; returns why it cannot be, or null. */
  feed(text: string): string | null {
    let line: unknown;
    try {
      line = JSON.parse(text);
    } catch {
      return "not valid JSON (a line cut short by a crash?)";
    }
    if (typeof line !== "object" || line === null || Array.isArray(line)) return "not a JSON object";
    const { r, k, a, p } = line as { r?: unknown; k?: unknown; a?: unknown; p?: unknown };
    if (typeof r !== "number" || !Number.isFinite(r)) return '"r" must be a finite number';
    if (typeof k !== "string") return '"k" must be a string';
    if (AGENT_KINDS.has(k as RecordKind) && typeof a !== "string") return `"a" must be a string for "${k}"`;
    const agent = a as string;
    let changes: AlertChange[];
    switch (k) {
      case "start": {
        const thresholds = (p as { thresholds?: unknown } | undefined)?.thresholds;
        try {
          this.engine = new AlertEngine({ thresholds: (thresholds ?? {}) as AlertThresholds });
        } catch (err) {
          return `start: ${err instanceof Error ? err.message : String(err)}`;
        }
        this.session++;
        changes = [];
        break;
      }
      case "hello": {
        const v = parsePayload(agentPayloadSchemas.hello, p);
        if (!v.ok) return `hello: ${v.error}`;
        changes = this.engine.hello(agent, v.value, r);
        break;
      }
      case "register": {
        const v = parsePayload(agentPayloadSchemas.register, p);
        if (!v.ok) return `register: ${v.error}`;
        changes = this.engine.register(agent, v.value.semaphores, r);
        break;
      }
      case "samples": {
        const v = parsePayload(agentPayloadSchemas.samples, p);
        if (!v.ok) return `samples: ${v.error}`;
        changes = this.engine.samples(agent, v.value, r);
        break;
      }
      case "events": {
        const v = parsePayload(agentPayloadSchemas.events, p);
        if (!v.ok) return `events: ${v.error}`;
        changes = this.engine.events(agent, v.value, r);
        break;
      }
      case "touch":
        changes = this.engine.touch(agent, r);
        break;
      case "disconnect":
        changes = this.engine.disconnect(agent, r);
        break;
      case "forget":
        changes = this.engine.forget(agent, r);
        break;
      case "tick":
        changes = this.engine.tick(r);
        break;
      case "ack": {
        const id = (p as { id?: unknown } | undefined)?.id;
        if (typeof id !== "string") return 'ack: "p.id" must be a string';
        changes = this.engine.acknowledge(id, r);
        break;
      }
      case "thresholds": {
        const parsed = parsePayload(thresholdsPatchSchema, p);
        if (!parsed.ok) return `thresholds: ${parsed.error}`;
        try {
          this.engine.setThresholds(parsed.value);
        } catch (err) {
          return `thresholds: ${err instanceof Error ? err.message : String(err)}`;
        }
        changes = [];
        break;
      }
      default:
        // A kind from a newer hub: nothing this engine can do with it, and nothing lost by skipping.
        changes = [];
    }
    for (const c of changes) {
      const key = `${this.session}\u0000${c.alert.id}`;
      // Deleting first would reorder; a Map keeps the first raise's position on update.
      this.alerts.set(key, c.alert);
    }
    this.lines++;
    return null;
  }

  result(stoppedAt?: { line: number; reason: string }): ReplayResult {
    return {
      alerts: [...this.alerts.values()],
      lines: this.lines,
      sessions: this.session,
      ...(stoppedAt !== undefined ? { stoppedAt } : {}),
    };
  }
}

/** Replays lines already in memory (tests, tools). */
export function replayLines(lines: Iterable<string>): ReplayResult {
  const r = new Replayer();
  let n = 0;
  for (const text of lines) {
    n++;
    if (text.trim() === "") continue;
    const reason = r.feed(text);
    if (reason !== null) return r.result({ line: n, reason });
  }
  return r.result();
}

/** Replays a recording file, streaming it (recordings can be large). Rejects only when it cannot be read. */
export async function replayRecording(file: string): Promise<ReplayResult> {
  const input = createReadStream(file, { encoding: "utf8" });
  const opened = new Promise<void>((resolve, reject) => {
    input.once("open", () => resolve());
    input.once("error", reject);
  });
  await opened;
  const rl = createInterface({ input, crlfDelay: Infinity });
  const r = new Replayer();
  let n = 0;
  try {
    for await (const text of rl) {
      n++;
      if (text.trim() === "") continue;
      const reason = r.feed(text);
      if (reason !== null) return r.result({ line: n, reason });
    }
  } finally {
    rl.close();
    input.destroy();
  }
  return r.result();
}
