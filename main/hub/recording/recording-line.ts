// One recording line (core/record-line.ts) checked as strictly as the hub checked the message it came
// from: agent payloads against the protocol schemas, people's inputs against the /ui schemas.
// A kind from a newer hub passes through untouched (a replay skips what it cannot use).
import { agentPayloadSchemas, parsePayload } from "../../../shared/protocol/index.js";
import { thresholdsPatchSchema } from "../../../shared/ui-protocol/index.js";
import type { RecordKind, RecordLine } from "../core/record-line.js";

/** Not a RecordLine of this hub: a kind added later, passed through for a replay to skip. */
export interface OtherLine {
  r: number;
  k: string;
  a?: string;
  p?: unknown;
}

/** The first line of a saved range (recording-range.ts): which part of the file was asked for. */
export interface RangeLine {
  r: number;
  k: "range";
  p: { name: string; from: number; to: number };
}

export type AnyRecordLine = RecordLine | RangeLine | OtherLine;

export type LineResult = { ok: true; line: AnyRecordLine } | { ok: false; reason: string };

const AGENT_KINDS: ReadonlySet<string> = new Set<RecordKind>(["hello", "register", "samples", "events", "flight", "touch", "disconnect", "forget"]);

export function parseRecordLine(text: string): LineResult {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, reason: "not valid JSON (a line cut short by a crash?)" };
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return { ok: false, reason: "not a JSON object" };
  const { r, k, a, p } = raw as { r?: unknown; k?: unknown; a?: unknown; p?: unknown };
  if (typeof r !== "number" || !Number.isFinite(r)) return { ok: false, reason: '"r" must be a finite number' };
  if (typeof k !== "string") return { ok: false, reason: '"k" must be a string' };
  if (AGENT_KINDS.has(k) && typeof a !== "string") return { ok: false, reason: `"a" must be a string for "${k}"` };
  const ok = (line: AnyRecordLine): LineResult => ({ ok: true, line });
  switch (k) {
    case "start": {
      const t = (p as { thresholds?: unknown } | undefined)?.thresholds;
      if (typeof p !== "object" || p === null || typeof t !== "object" || t === null) return { ok: false, reason: 'start: "p.thresholds" must be an object' };
      return ok(raw as RecordLine);
    }
    case "hello":
    case "register":
    case "samples":
    case "events":
    case "flight": {
      const v = parsePayload(agentPayloadSchemas[k], p);
      if (!v.ok) return { ok: false, reason: `${k}: ${v.error}` };
      return ok({ r, k, a: a as string, p: v.value } as RecordLine);
    }
    case "touch":
    case "disconnect":
    case "forget":
      return ok({ r, k, a: a as string });
    case "tick":
      return ok({ r, k });
    case "ack": {
      const id = (p as { id?: unknown } | undefined)?.id;
      if (typeof id !== "string") return { ok: false, reason: 'ack: "p.id" must be a string' };
      return ok({ r, k, p: { id } });
    }
    case "thresholds": {
      const v = parsePayload(thresholdsPatchSchema, p);
      if (!v.ok) return { ok: false, reason: `thresholds: ${v.error}` };
      return ok({ r, k, p: v.value });
    }
    case "range": {
      const q = p as { name?: unknown; from?: unknown; to?: unknown } | undefined;
      if (typeof q?.name !== "string" || typeof q.from !== "number" || typeof q.to !== "number") {
        return { ok: false, reason: 'range: "p" must be { name, from, to }' };
      }
      return ok({ r, k, p: { name: q.name, from: q.from, to: q.to } });
    }
    default:
      return ok(raw as OtherLine);
  }
}
