// The agent's answer to flight_request: one answer per request, one ring per semaphore per 10 s
// (a request inside it points at the alert that got the ring), and never a packet the hub would
// close the connection over, however big the ring and its stacks.
import { describe, expect, it } from "vitest";
import { FlightRecorder, type Tracked } from "../../agent/src/index.js";
import { FlightResponder, FLIGHT_INTERVAL_MS } from "../../agent/src/reporter/flight-responder.js";
import { jsonBytes, PACKET_BUDGET_BYTES } from "../../agent/src/reporter/packet-split.js";
import { flightRecordSchema, parsePayload, type FlightRecord } from "../../shared/protocol/index.js";

function tracked(id: string, flightRecorder?: FlightRecorder): Tracked {
  return { id, describe: () => ({}) as never, sample: () => ({}) as never, ...(flightRecorder !== undefined ? { flightRecorder } : {}) };
}

function responder(items: Tracked[], clock: { now: number }) {
  const sent: FlightRecord[] = [];
  const r = new FlightResponder({ find: (id) => items.find((t) => t.id === id), send: (rec) => sent.push(rec), now: () => clock.now });
  return { r, sent };
}

describe("FlightResponder", () => {
  it("answers every request once: the ring, then rate_limited with sameAs for 10 s, then the ring again", () => {
    const ring = new FlightRecorder(64);
    for (let i = 1; i <= 100; i++) ring.record("grant", { holder: i, weight: 1 });
    const clock = { now: 1_000_000 };
    const { r, sent } = responder([tracked("db", ring), tracked("plain")], clock);
    r.onRequest({ id: "db", alertId: "A" });
    clock.now += FLIGHT_INTERVAL_MS - 1;
    r.onRequest({ id: "db", alertId: "B" });
    r.onRequest({ id: "plain", alertId: "C" });
    r.onRequest({ id: "nope", alertId: "D" });
    clock.now += 1;
    r.onRequest({ id: "db", alertId: "E" });
    expect(sent.map((s) => [s.alertId, s.status ?? "ring", s.ops.length, s.sameAs])).toEqual([
      ["A", "ring", 64, undefined],
      ["B", "rate_limited", 0, "A"],
      ["C", "unavailable", 0, undefined],
      ["D", "unavailable", 0, undefined],
      ["E", "ring", 64, undefined],
    ]);
    expect(sent[0].total).toBe(100);
    expect(sent[0].ops.map((o) => o.holder)).toEqual(Array.from({ length: 64 }, (_, i) => 37 + i));
    for (const s of sent) expect(parsePayload(flightRecordSchema, s).ok).toBe(true);
  });

  it("ignores a request it cannot read (nothing to answer to)", () => {
    const { r, sent } = responder([tracked("db", new FlightRecorder(8))], { now: 0 });
    for (const bad of [undefined, null, "db", { id: "db" }, { id: 1, alertId: "x" }, { id: "db", alertId: "x".repeat(300) }]) r.onRequest(bad);
    expect(sent).toEqual([]);
    expect(r.malformed).toBe(6);
  });

  it("cuts a huge ring with big stacks down to one packet the hub accepts, newest operations kept", () => {
    const ring = new FlightRecorder(65536);
    // Non-ASCII paths: 16,384 UTF-16 units of them are ~48 KB of UTF-8, so 32 stacks overflow a packet.
    const frame = (i: number) => `    at 処理${i} (/srv/アプリ/経路/とても長いモジュール名-${i}.js:${i}:17)\n`;
    for (let i = 1; i <= 65536; i++) ring.record("grant", { holder: i, weight: 1, stack: i % 64 === 0 ? `Error\n${frame(i).repeat(400)}` : undefined });
    const { r, sent } = responder([tracked("db", ring)], { now: 0 });
    r.onRequest({ id: "db", alertId: "A" });
    expect(sent).toHaveLength(1);
    const rec = sent[0];
    expect(jsonBytes(rec)).toBeLessThanOrEqual(PACKET_BUDGET_BYTES);
    expect(rec.ops.length).toBeGreaterThan(0);
    expect(rec.stacks.length).toBeGreaterThan(0);
    // It had to give something up to fit.
    expect(rec.ops.length < 4096 || rec.stacks.length < 32).toBe(true);
    expect(rec.ops.at(-1)?.holder).toBe(65536);
    expect(rec.total).toBe(65536);
    const parsed = parsePayload(flightRecordSchema, rec);
    expect(parsed.ok).toBe(true);
  });
});
