import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fleetKey, instanceKey, keyPart, semaphoreKey, splitKey } from "../../shared/protocol/types.js";

describe("semaphore keys", () => {
  it("keep names holding / or % apart, and read back to the names", () => {
    expect(semaphoreKey("a/b", "c", "d")).not.toBe(semaphoreKey("a", "b/c", "d"));
    expect(semaphoreKey("a/b", "c", "d")).toBe("a%2Fb/c/d");
    expect(semaphoreKey("checkout", "web-1", "db")).toBe("checkout/web-1/db");
    expect(splitKey(semaphoreKey("50%", "%2F", "x/y"))).toEqual(["50%", "%2F", "x/y"]);
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.string(), fc.string(), fc.string(), fc.string(), (s1, i1, d1, s2, i2, d2) => {
        const same = s1 === s2 && i1 === i2 && d1 === d2;
        expect(semaphoreKey(s1, i1, d1) === semaphoreKey(s2, i2, d2)).toBe(same);
        expect(splitKey(semaphoreKey(s1, i1, d1))).toEqual([s1, i1, d1]);
        expect(splitKey(fleetKey(s1, i1))).toEqual([s1, i1]);
        expect(instanceKey(s1, i1)).toBe(`${keyPart(s1)}/${keyPart(i1)}`);
      }),
      { numRuns: 2000 },
    );
  });
});
