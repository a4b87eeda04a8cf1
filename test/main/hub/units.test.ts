// The hub's small pure parts: the seq window behind dedupe, the close-for-size test, loopback
// detection, the constant-time token check.
import { describe, expect, it } from "vitest";
import { closedForSize } from "../../../main/hub/ingest/agent-session.js";
import { TokenCheck } from "../../../main/hub/auth.js";
import { isLoopback } from "../../../main/hub/options.js";
import { SeqWindow } from "../../../main/hub/core/seq-window.js";

describe("SeqWindow", () => {
  it("remembers the last 4096 seqs exactly and treats older ones as seen", () => {
    const w = new SeqWindow();
    for (let s = 0; s < 10_000; s += 2) w.add(s);
    expect(w.low).toBe(9998 - 4095);
    for (let s = w.low; s < 10_000; s++) expect(w.has(s), String(s)).toBe(s % 2 === 0);
    expect(w.has(w.low - 1)).toBe(true);
    expect(w.has(10_001)).toBe(false);
    expect(w.has(1_000_000)).toBe(false);
  });

  it("handles out-of-order arrivals and jumps past the window", () => {
    const w = new SeqWindow();
    w.add(5);
    w.add(3);
    expect([w.has(3), w.has(4), w.has(5)]).toEqual([true, false, true]);
    w.add(100_000);
    expect(w.has(100_000)).toBe(true);
    expect(w.has(99_999)).toBe(false);
    expect(w.has(5)).toBe(true); // below the floor now
    w.add(2 ** 52);
    expect(w.has(2 ** 52)).toBe(true);
    expect(w.has(2 ** 52 - 1)).toBe(false);
  });
});

describe("closedForSize", () => {
  it("recognises engine.io's closes for an oversize packet and nothing else", () => {
    expect(closedForSize("transport error", new Error("RangeError: Max payload size exceeded"))).toBe(true);
    expect(closedForSize("transport error", Object.assign(new Error("payload too large"), { type: "TransportError" }))).toBe(true);
    expect(closedForSize("transport close", { description: { code: 1009 } })).toBe(true);
    expect(closedForSize("transport close", undefined)).toBe(false);
    expect(closedForSize("client namespace disconnect", "Max payload size exceeded")).toBe(false);
    expect(closedForSize("ping timeout", undefined)).toBe(false);
  });
});

describe("isLoopback", () => {
  it("knows loopback names and addresses", () => {
    for (const h of ["127.0.0.1", "127.1.2.3", "localhost", "LOCALHOST", "::1", "[::1]"]) expect(isLoopback(h), h).toBe(true);
    for (const h of ["0.0.0.0", "::", "192.168.1.2", "example.com", "127.example.com", "10.0.0.1"]) expect(isLoopback(h), h).toBe(false);
  });
});

describe("TokenCheck", () => {
  it("accepts only the exact token, of any type only a string", () => {
    const t = new TokenCheck("abc");
    expect(t.accepts("abc")).toBe(true);
    for (const bad of ["ab", "abcd", "", undefined, null, 5, ["abc"], { toString: () => "abc" }]) expect(t.accepts(bad)).toBe(false);
    expect(t.acceptsHeader("Bearer abc")).toBe(true);
    expect(t.acceptsHeader("bearer abc")).toBe(true);
    expect(t.acceptsHeader("Basic abc")).toBe(false);
    expect(t.acceptsHeader(undefined)).toBe(false);
    expect(t.refuseHandshake({ protocol: 2 })).toBe("unauthorized");
    expect(t.refuseHandshake({ protocol: 2, token: "abc" })).toBe("unsupported_protocol");
    expect(t.refuseHandshake(null)).toBe("unauthorized");
    const open = new TokenCheck(undefined);
    expect(open.accepts(undefined)).toBe(true);
    expect(open.refuseHandshake({ protocol: 1, token: 5 })).toBe(null);
  });
});
