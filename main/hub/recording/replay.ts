// Replays a recording (recorder.ts) into a fresh AlertEngine: the same calls, in the same order,
// with the same hub times, so the same alerts come out, ids and times included. Stops at the
// first damaged line (a crash can leave the last one half written) and says where.
import { AlertEngine, type AlertChange, type AlertThresholds, type ThresholdsPatch } from "../../../shared/alerts/index.js";
import { HistoryStore } from "../../../shared/history/index.js";
import { semaphoreKey, type Alert, type EventsBatch, type FlightRecord, type Hello, type Register, type SamplesBatch } from "../../../shared/protocol/index.js";
import { AlertEvidence } from "../core/alert-evidence.js";
import { parseRecordLine, type AnyRecordLine } from "./recording-line.js";
import { readRecording, type ReadLimits } from "./recording-reader.js";

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

/** Feeds recording lines to engines, one engine per hub session. */
export class Replayer {
  private engine = new AlertEngine();
  // The hub's evidence (flight rings, diagnoses: alert-evidence.ts) needs the history it reads.
  private history = new HistoryStore();
  private evidence = new AlertEvidence(this.engine, this.history);
  private readonly identity = new Map<string, { service: string; instance: string }>();
  private session = 0;
  private readonly alerts = new Map<string, Alert>();
  lines = 0;

  /** Replays one line of text; returns why it cannot be, or null. */
  feed(text: string): string | null {
    const parsed = parseRecordLine(text);
    return parsed.ok ? this.feedLine(parsed.line) : parsed.reason;
  }

  /** Replays one checked line (recording-line.ts); returns why it cannot be, or null. */
  feedLine(line: AnyRecordLine): string | null {
    const { r, k } = line;
    const agent = (line as { a?: string }).a as string;
    const p = (line as { p?: unknown }).p;
    let changes: AlertChange[];
    switch (k) {
      case "start": {
        const thresholds = (p as { thresholds?: unknown } | undefined)?.thresholds;
        try {
          this.engine = new AlertEngine({ thresholds: (thresholds ?? {}) as AlertThresholds });
          this.history = new HistoryStore();
          this.evidence = new AlertEvidence(this.engine, this.history);
          this.identity.clear();
        } catch (err) {
          return `start: ${err instanceof Error ? err.message : String(err)}`;
        }
        this.session++;
        changes = [];
        break;
      }
      case "hello": {
        const v = p as Hello;
        this.identity.set(agent, { service: v.service, instance: v.instance });
        changes = this.engine.hello(agent, v, r);
        break;
      }
      case "register":
        changes = this.engine.register(agent, (p as Register).semaphores, r);
        break;
      case "samples": {
        const v = p as SamplesBatch;
        const who = this.identity.get(agent);
        const keys = who === undefined ? [] : v.items.map((item) => semaphoreKey(who.service, who.instance, item.id));
        v.items.forEach((item, i) => keys[i] !== undefined && this.history.push(keys[i], item, v.t, v.intervalMs));
        changes = this.engine.samples(agent, v, r);
        changes.push(...this.evidence.onChanges(changes));
        if (this.evidence.watching) for (const key of keys) changes.push(...this.evidence.afterSample(key, v.t));
        break;
      }
      case "events":
        changes = this.engine.events(agent, p as EventsBatch, r);
        break;
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
      case "ack":
        changes = this.engine.acknowledge((p as { id: string }).id, r);
        break;
      case "thresholds": {
        try {
          this.engine.setThresholds(p as ThresholdsPatch);
        } catch (err) {
          return `thresholds: ${err instanceof Error ? err.message : String(err)}`;
        }
        changes = [];
        break;
      }
      case "flight": {
        const who = this.identity.get(agent);
        const out = who === undefined ? undefined : this.evidence.flight(who.service, who.instance, p as FlightRecord);
        changes = out?.ok === true ? out.changes : [];
        break;
      }
      default:
        // A kind from a newer hub: nothing this engine can do with it, and nothing lost by skipping.
        changes = [];
    }
    if (k !== "samples" && changes.length > 0) changes.push(...this.evidence.onChanges(changes));
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
export async function replayRecording(file: string, limits: ReadLimits = {}): Promise<ReplayResult> {
  const r = new Replayer();
  const summary = await readRecording(file, (line) => r.feedLine(line) ?? undefined, limits);
  const stop = summary.stoppedAt;
  return r.result(stop === undefined ? undefined : { line: stop.line, reason: stop.reason });
}
