// Replays a recording (recorder.ts) into a fresh AlertEngine: the same calls, in the same order,
// with the same hub times, so the same alerts come out, ids and times included. Stops at the
// first damaged line (a crash can leave the last one half written) and says where.
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { createGunzip } from "node:zlib";
import { AlertEngine, type AlertChange, type AlertThresholds } from "../../../shared/alerts/index.js";
import { HistoryStore } from "../../../shared/history/index.js";
import { agentPayloadSchemas, parsePayload, semaphoreKey, type Alert } from "../../../shared/protocol/index.js";
import { thresholdsPatchSchema } from "../../../shared/ui-protocol/index.js";
import { AlertEvidence } from "../core/alert-evidence.js";
import type { RecordKind } from "./recorder.js";
import { isGzipFile } from "./recording-reader.js";

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

const AGENT_KINDS: ReadonlySet<RecordKind> = new Set(["hello", "register", "samples", "events", "touch", "disconnect", "forget", "flight"]);

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
        const v = parsePayload(agentPayloadSchemas.hello, p);
        if (!v.ok) return `hello: ${v.error}`;
        this.identity.set(agent, { service: v.value.service, instance: v.value.instance });
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
        const who = this.identity.get(agent);
        const keys = who === undefined ? [] : v.value.items.map((item) => semaphoreKey(who.service, who.instance, item.id));
        v.value.items.forEach((item, i) => keys[i] !== undefined && this.history.push(keys[i], item, v.value.t, v.value.intervalMs));
        changes = this.engine.samples(agent, v.value, r);
        changes.push(...this.evidence.onChanges(changes));
        if (this.evidence.watching) for (const key of keys) changes.push(...this.evidence.afterSample(key, v.value.t));
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
      case "flight": {
        const v = parsePayload(agentPayloadSchemas.flight, p);
        if (!v.ok) return `flight: ${v.error}`;
        const who = this.identity.get(agent);
        const out = who === undefined ? undefined : this.evidence.flight(who.service, who.instance, v.value);
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
export async function replayRecording(file: string): Promise<ReplayResult> {
  const gzip = await isGzipFile(file);
  const input = createReadStream(file);
  const opened = new Promise<void>((resolve, reject) => {
    input.once("open", () => resolve());
    input.once("error", reject);
  });
  await opened;
  // The app's recordings are gzip (recording-writer.ts); the headless hub's `--record` plain NDJSON.
  const text = gzip ? input.pipe(createGunzip()) : input;
  const rl = createInterface({ input: text, crlfDelay: Infinity });
  const r = new Replayer();
  let n = 0;
  try {
    for await (const text of rl) {
      n++;
      if (text.trim() === "") continue;
      const reason = r.feed(text);
      if (reason !== null) return r.result({ line: n, reason });
    }
  } catch (err) {
    if (!gzip) throw err;
    // Cut-short compressed data: what decompressed before it was replayed (the partial line is lost).
    return r.result({ line: n + 1, reason: `the compressed data ends early or is damaged (${err instanceof Error ? err.message : String(err)})` });
  } finally {
    rl.close();
    input.destroy();
  }
  return r.result();
}
