import { describe, expect, it } from "vitest";
import { chartCsv, csvField, exportFileName } from "../../renderer/src/logic/csv.js";

describe("csv", () => {
  it("quotes only what needs quoting", () => {
    expect(csvField("plain")).toBe("plain");
    expect(csvField("a,b")).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField("two\nlines")).toBe('"two\nlines"');
  });

  it("writes a header, ISO and epoch times, one column per series, and skips gap rows", () => {
    const t = [Date.UTC(2024, 0, 1, 0, 0, 0), Date.UTC(2024, 0, 1, 0, 0, 1), Date.UTC(2024, 0, 1, 0, 0, 30)];
    const csv = chartCsv(t, [
      { label: "in use", values: [1, null, 3] },
      { label: "cap, N", values: [10, null, 10.1 + 0.2] },
    ]);
    const lines = csv.trimEnd().split("\r\n");
    expect(lines[0]).toBe('time,t_ms,in use,"cap, N"');
    expect(lines[1]).toBe(`2024-01-01T00:00:00.000Z,${t[0]},1,10`);
    expect(lines[2]).toBe(`2024-01-01T00:00:30.000Z,${t[2]},3,10.3`);
    expect(lines).toHaveLength(3);
  });

  it("leaves a cell empty for a missing value in a row that has others", () => {
    const csv = chartCsv([1000], [{ label: "a", values: [null] }, { label: "b", values: [NaN] }, { label: "c", values: [2] }]);
    expect(csv.split("\r\n")[1]).toBe("1970-01-01T00:00:01.000Z,1000,,,2");
  });

  it("names files safely", () => {
    const name = exportFileName(["checkout", "web-1", "db", "In use / cap"], new Date(2024, 2, 4, 14, 3, 27).getTime(), "csv");
    expect(name).toBe("checkout-web-1-db-in-use-cap-20240304-140327.csv");
    expect(exportFileName(["//"], 0, "png")).toMatch(/^semscope-\d{8}-\d{6}\.png$/);
  });
});
