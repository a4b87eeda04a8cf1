// Snapshots, deltas and fleet:get answers are written as UTF-8 into off-heap chunks as they are
// made (main/hub/dashboard/json-bytes.ts) and sent as those bytes (raw-json.ts). Whatever the
// strings (any Unicode, pieces longer than a chunk, a surrogate pair where a piece is cut, parts
// made apart and appended), the bytes are exactly the UTF-8 of the text joined the plain way, and
// a hub's snapshot over WebSocket (the bytes) and over long-polling (the text) parse alike.
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { JsonBytes } from "../../../../main/hub/dashboard/json-bytes.js";
import { AFTER_ACK, AFTER_EVENT, RawJson } from "../../../../main/hub/dashboard/raw-json.js";
import { runToEnd } from "../../../../main/hub/dashboard/slices.js";
import { agent, cleanupAll, client, request, sample, startHub, waitUntil } from "../helpers.js";

afterEach(cleanupAll);

/** A JSON value's text with a long string in it: over a chunk's worth of characters, with a surrogate pair every few. */
const longJson = fc.tuple(fc.integer({ min: 20_000, max: 70_000 }), fc.integer({ min: 0, max: 7 })).map(([n, phase]) => {
  const unit = "a\u00e9\u4e2d😀".slice(0, 3 + (phase % 3));
  return JSON.stringify({ long: unit.repeat(Math.ceil(n / unit.length)).slice(0, n).replace(/[\ud800-\udbff]$/, "") });
});
const itemJson = fc.oneof({ weight: 6, arbitrary: fc.jsonValue().map((v) => JSON.stringify(v)) }, { weight: 1, arbitrary: longJson });

describe("JSON written as UTF-8 chunks", () => {
  it("is byte for byte the UTF-8 of the text made by joining strings, however it was cut and appended", () => {
    fc.assert(
      fc.property(fc.array(fc.array(itemJson, { maxLength: 40 }), { minLength: 1, maxLength: 4 }), fc.constantFrom(AFTER_EVENT, AFTER_ACK, ""), (parts, after) => {
        const out = JsonBytes.of('{"parts":[');
        parts.forEach((items, i) => {
          const part = new JsonBytes(`"p${i}":[`);
          for (const item of items) part.item(item);
          if (i > 0) out.write(",");
          if (part.count === 0) out.write(`"p${i}":[`);
          out.append(part);
          out.write("]");
        });
        out.write("]}");
        const text = `{"parts":[${parts.map((items, i) => `"p${i}":[${items.join(",")}]`).join(",")}]}`;
        const raw = new RawJson(out);
        runToEnd(raw.prepare(after));
        expect(raw.encoded(after).equals(Buffer.from(text + after))).toBe(true);
        // Another ending is copied from the first; the text decodes from them.
        expect(raw.encoded("}]").equals(Buffer.from(`${text}}]`))).toBe(true);
        expect(raw.text).toBe(text);
      }),
      { numRuns: 60 },
    );
  });
});

describe("a RawJson being prepared", () => {
  it("refuses to be read until its first copy is done, and its chunks go back once", () => {
    const items = Array.from({ length: 400 }, (_, i) => JSON.stringify({ i, s: "x".repeat(500) }));
    const json = new JsonBytes("[");
    for (const item of items) json.item(item);
    json.write("]");
    const raw = new RawJson(json);
    const steps = raw.prepare(AFTER_EVENT);
    steps.next();
    expect(() => raw.encoded(AFTER_ACK)).toThrow(/being copied/);
    expect(() => raw.text).toThrow(/being copied/);
    runToEnd(steps);
    // Two texts made after it, from chunks given back: neither overwrites the other or the first.
    const a = JsonBytes.of(JSON.stringify(items.map((x) => x.replace(/x/g, "a"))));
    const b = JsonBytes.of(JSON.stringify(items.map((x) => x.replace(/x/g, "b"))));
    const [ra, rb] = [new RawJson(a), new RawJson(b)];
    expect(raw.text).toBe(`[${items.join(",")}]`);
    expect(ra.text).toBe(JSON.stringify(items.map((x) => x.replace(/x/g, "a"))));
    expect(rb.text).toBe(JSON.stringify(items.map((x) => x.replace(/x/g, "b"))));
  });
});

describe("a hub's snapshot", () => {
  it("parses alike sent as bytes over WebSocket and as text over long-polling", async () => {
    const hub = await startHub();
    // Names in several scripts and an emoji: multi-byte UTF-8 in every part of the snapshot.
    const infos = ["db-é", "cache-中文", "http-😀", "queue"].map((id) => ({ id, name: id, kind: "semaphore", cap: 10, queue: "fifo", maxWaiters: null, acquireTimeoutMs: null, leaseTimeoutMs: null, leakThresholdMs: null, scope: "process" }) as const);
    const a = await agent(hub, "agent-ü", [...infos], { service: "svc-ñ" });
    expect(await request(a, "samples", { seq: 0, t: Date.now(), intervalMs: 1000, items: infos.map((i) => sample(i.id)) })).toMatchObject({ ok: true });
    const ws = await client(hub.url, "/ui", { transports: ["websocket"] });
    const polling = await client(hub.url, "/ui", { transports: ["polling"] });
    await waitUntil(async () => ((await request<{ snapshot?: { state: { semaphores: unknown[] } } }>(ws, "snapshot:get")).snapshot?.state.semaphores.length ?? 0) === 4, "the samples in a snapshot");
    const [overWs, overPolling] = await Promise.all([request<{ ok: boolean; snapshot: Record<string, unknown> }>(ws, "snapshot:get"), request<{ ok: boolean; snapshot: Record<string, unknown> }>(polling, "snapshot:get")]);
    expect(overWs.ok).toBe(true);
    // Nothing is sampled meanwhile: two builds differ only in when they were made.
    const when = ({ serverTime: _t, deltaSeq: _s, ...rest }: Record<string, unknown>) => rest;
    expect(overPolling.ok).toBe(true);
    expect(when(overPolling.snapshot)).toEqual(when(overWs.snapshot));
    expect(JSON.stringify(overWs.snapshot)).toContain("http-😀");
  });
});
