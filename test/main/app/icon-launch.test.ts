import { inflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { appIconPng, crc32, drawGlyph, encodePng, trayIconPng } from "../../../main/app/icon-art.js";
import { parseLaunchArgs, rendererDir } from "../../../main/app/launch.js";

/** The chunks of a PNG, checked (signature, CRCs), and its pixels. */
function decode(png: Buffer): { width: number; height: number; rgba: Buffer } {
  expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  let off = 8;
  let width = 0;
  let height = 0;
  const idat: Buffer[] = [];
  for (;;) {
    const len = png.readUInt32BE(off);
    const type = png.toString("ascii", off + 4, off + 8);
    const data = png.subarray(off + 8, off + 8 + len);
    expect(png.readUInt32BE(off + 8 + len)).toBe(crc32(png.subarray(off + 4, off + 8 + len)));
    if (type === "IHDR") {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      expect([data[8], data[9]]).toEqual([8, 6]);
    } else if (type === "IDAT") idat.push(data);
    off += 12 + len;
    if (type === "IEND") break;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const rgba = Buffer.alloc(width * height * 4);
  for (let y = 0; y < height; y++) raw.copy(rgba, y * width * 4, y * (width * 4 + 1) + 1, (y + 1) * (width * 4 + 1));
  return { width, height, rgba };
}

function pixel(img: { width: number; rgba: Buffer }, x: number, y: number): number[] {
  const o = (y * img.width + x) * 4;
  return [...img.rgba.subarray(o, o + 4)];
}

describe("icon art", () => {
  it("computes the standard CRC-32", () => {
    expect(crc32(Buffer.from("123456789"))).toBe(0xcbf43926);
  });

  it("encodes a valid RGBA PNG that decodes to the same pixels", () => {
    const rgba = drawGlyph(16, { lit: [true, false, false], backdrop: false });
    const img = decode(encodePng(16, 16, rgba));
    expect(img).toMatchObject({ width: 16, height: 16 });
    expect(img.rgba.equals(Buffer.from(rgba))).toBe(true);
    expect(() => encodePng(2, 2, new Uint8Array(3))).toThrow(RangeError);
    expect(() => drawGlyph(4, { lit: [false, false, false], backdrop: false })).toThrow(RangeError);
  });

  it("lights the tray light of the level: red for critical, green for ok; transparent corners", () => {
    const critical = decode(trayIconPng("critical", 64));
    const ok = decode(trayIconPng("ok", 64));
    // Centre of the top light (y ≈ 0.5 − 0.48·0.62) and of the bottom one.
    const top = [32, Math.round(64 * (0.5 - 0.48 * 0.62))] as const;
    const bottom = [32, Math.round(64 * (0.5 + 0.48 * 0.62))] as const;
    expect(pixel(critical, ...top)).toEqual([0xef, 0x44, 0x44, 255]);
    expect(pixel(critical, ...bottom)).toEqual([0x17, 0x3d, 0x25, 255]);
    expect(pixel(ok, ...bottom)).toEqual([0x22, 0xc5, 0x5e, 255]);
    expect(pixel(ok, 0, 0)[3]).toBe(0);
  });

  it("draws the app icon on an opaque backdrop", () => {
    const icon = decode(appIconPng(128));
    expect(icon.width).toBe(128);
    expect(pixel(icon, 20, 64)).toEqual([0x1f, 0x29, 0x37, 255]);
  });
});

describe("launch", () => {
  it("finds the dashboard unpacked next to the asar when packaged, in the checkout otherwise", () => {
    expect(rendererDir("/opt/Semscope/resources/app.asar", true)).toBe("/opt/Semscope/resources/app.asar.unpacked/renderer/dist");
    expect(rendererDir("/work/main", false)).toBe("/work/main/renderer/dist");
  });

  it("reads --record among Electron's and Chromium's flags", () => {
    expect(parseLaunchArgs(["/usr/bin/electron", ".", "--no-sandbox", "--record", "/tmp/r.ndjson"])).toEqual({ record: "/tmp/r.ndjson" });
    expect(parseLaunchArgs(["semscope", "--record=/tmp/x.ndjson"])).toEqual({ record: "/tmp/x.ndjson" });
    expect(parseLaunchArgs(["semscope", "--record"])).toEqual({});
    expect(parseLaunchArgs(["semscope", "--record", "--other"])).toEqual({});
    expect(parseLaunchArgs(["semscope", "--record="])).toEqual({});
  });

  it("reads --port for this run's local hub, and reports a port it cannot use instead of guessing", () => {
    expect(parseLaunchArgs(["/usr/bin/electron", "--js-flags=--max-semi-space-size=64", ".", "--port=7431"])).toEqual({ port: 7431 });
    expect(parseLaunchArgs(["semscope", "--port", "65535", "--no-demo"])).toEqual({ port: 65535, noDemo: true });
    for (const bad of ["--port=0", "--port=70000", "--port=74x", "--port=", "--port=-1", "--port=7420.5"]) {
      const out = parseLaunchArgs(["semscope", bad]);
      expect(out.port).toBeUndefined();
      expect(out.problems).toEqual([expect.stringMatching(/^--port must be an integer from 1 to 65535, got ".*": using the port in Settings$/)]);
    }
    expect(parseLaunchArgs(["semscope", "--port"]).problems).toHaveLength(1);
  });
});
