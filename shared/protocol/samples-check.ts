// `samples` checked a slice of items at a time, so a hub can interleave a full batch's check with
// other agents' messages. The answer is exactly parsePayload(samplesBatchSchema, data)'s, value or
// reason: every item the fast path (fast-samples.ts) passes is one zod passes with the same output,
// and zod itself checks the envelope when the fast path cannot, and each item the fast path
// refuses (zod's array check reports an item's issues under `items.<i>`, in item order, after the
// batch's own fields and before `dropped`). Refusing a batch of 1,000 bad items so costs what
// checking them does, spread over as many steps as the caller likes.
import type { z } from "zod";
import { fastEnvelope, fastSample, withItems, type SamplesEnvelope } from "./fast-samples.js";
import { describeIssues, safeParseWire, sampleSchema, samplesEnvelopeSchema, UNREADABLE, type ParseResult } from "./schemas.js";
import type { Sample, SamplesBatch } from "./types.js";

type Issue = z.core.$ZodIssue;

export class SamplesCheck {
  private envelope: SamplesEnvelope | undefined;
  private readonly before: Issue[] = [];
  private readonly itemIssues: Issue[] = [];
  private after: Issue[] = [];
  private readonly out: Sample[] = [];
  private next = 0;
  private result: ParseResult<SamplesBatch> | undefined;

  constructor(private readonly data: unknown) {}

  /** Items checked so far (the work done, for a scheduler's accounting). */
  get checked(): number {
    return this.next;
  }

  /** Checks up to `maxItems` more items; the answer once the whole batch is checked, else undefined. */
  step(maxItems = Infinity): ParseResult<SamplesBatch> | undefined {
    if (this.result !== undefined) return this.result;
    try {
      if (this.envelope === undefined && !this.openEnvelope()) return this.result;
      const env = this.envelope!;
      const end = Math.min(env.items.length, this.next + Math.max(1, maxItems));
      for (; this.next < end; this.next++) this.checkItem(env.items[this.next], this.next);
      if (this.next < env.items.length) return undefined;
      const issues = [...this.before, ...this.itemIssues, ...this.after];
      this.result = issues.length === 0 ? { ok: true, value: withItems(env, this.out) } : { ok: false, error: describeIssues(issues) };
    } catch {
      this.result = { ok: false, error: UNREADABLE };
    }
    return this.result;
  }

  /** false when the answer is already known (the items cannot even be walked). */
  private openEnvelope(): boolean {
    let env: SamplesEnvelope | undefined;
    try {
      env = fastEnvelope(this.data);
    } catch {
      env = undefined;
    }
    if (env !== undefined) {
      this.envelope = env;
      return true;
    }
    const r = safeParseWire(samplesEnvelopeSchema, this.data);
    if (r.success) {
      this.envelope = r.data as SamplesEnvelope;
      return true;
    }
    const issues = r.error.issues;
    // Not an object, or items not a list of at most 1,000: zod checks no item then either.
    if (issues.some((i) => i.path.length === 0 || i.path[0] === "items")) {
      this.result = { ok: false, error: describeIssues(issues) };
      return false;
    }
    for (const i of issues) (i.path[0] === "dropped" || i.path[0] === "partial" ? this.after : this.before).push(i);
    this.envelope = { seq: 0, t: 0, intervalMs: 1, items: (this.data as { items: unknown[] }).items };
    return true;
  }

  private checkItem(item: unknown, index: number): void {
    let s: Sample | undefined;
    try {
      s = fastSample(item);
    } catch {
      s = undefined;
    }
    if (s === undefined) {
      const r = safeParseWire(sampleSchema, item);
      if (!r.success) {
        for (const issue of r.error.issues) this.itemIssues.push({ ...issue, path: ["items", index, ...issue.path] });
        return;
      }
      s = r.data;
    }
    if (this.before.length + this.itemIssues.length + this.after.length === 0) this.out.push(s);
  }
}

/** The whole check at once: parsePayload(samplesBatchSchema, data), by another road. */
export function checkSamples(data: unknown): ParseResult<SamplesBatch> {
  return new SamplesCheck(data).step(Infinity)!;
}
