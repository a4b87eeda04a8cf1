// What dashboards get of a percentile: 4 significant digits of the hub's figure, which is itself a
// histogram bucket estimate good to ~9 %.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fourDigits } from "../../../../main/hub/dashboard/views.js";

/** Significant digits in a number's JSON form. */
const significant = (x: number) => JSON.stringify(x).replace(/^-/, "").replace(/e.*$/, "").replace(".", "").replace(/^0+/, "").replace(/0+$/, "").length;

describe("fourDigits", () => {
  it("keeps 4 significant digits, within half a unit of the 4th, for any magnitude", () => {
    fc.assert(
      fc.property(fc.double({ min: 1e-15, max: 1e15, noNaN: true }), fc.boolean(), (magnitude, negative) => {
        const x = negative ? -magnitude : magnitude;
        const r = fourDigits(x);
        expect(Math.abs(r - x)).toBeLessThanOrEqual(Math.abs(x) * 5.001e-4);
        expect(significant(r)).toBeLessThanOrEqual(4);
      }),
    );
  });

  it("leaves zero, and what is not finite, as it is", () => {
    expect(fourDigits(0)).toBe(0);
    expect(fourDigits(Infinity)).toBe(Infinity);
    expect(fourDigits(25.299209397678453)).toBe(25.3);
    expect(fourDigits(0.019869724993175745)).toBe(0.01987);
    expect(fourDigits(123_456_789)).toBe(123_500_000);
  });
});
