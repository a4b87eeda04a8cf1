// The semaphore glyph (a signal head with red, amber and green lights) drawn into PNGs at run
// time: the tray icon lights the colour of the worst active alert, and the window icon needs no
// file in the package. build/make-icon.mjs draws the same glyph for the installers' icon.
import { deflateSync } from "node:zlib";
import type { TrayLevel } from "./tray-state.js";

type Rgb = readonly [number, number, number];
const BACKGROUND: Rgb = [0x1f, 0x29, 0x37];
const HOUSING: Rgb = [0x0b, 0x0f, 0x19];
const LIGHTS: readonly { on: Rgb; off: Rgb }[] = [
  { on: [0xef, 0x44, 0x44], off: [0x4b, 0x1d, 0x1d] },
  { on: [0xf5, 0x9e, 0x0b], off: [0x4a, 0x3a, 0x12] },
  { on: [0x22, 0xc5, 0x5e], off: [0x17, 0x3d, 0x25] },
];

export interface GlyphOptions {
  /** Which of red, amber, green are lit. */
  lit: readonly [boolean, boolean, boolean];
  /** A rounded-square backdrop (app icon) or none (tray). */
  backdrop: boolean;
}

/** Signed distance from (px, py) to a rounded rectangle (centre cx, cy; half sizes hw, hh; radius r). */
function roundedRect(px: number, py: number, cx: number, cy: number, hw: number, hh: number, r: number): number {
  const qx = Math.abs(px - cx) - hw + r;
  const qy = Math.abs(py - cy) - hh + r;
  return Math.hypot(Math.max(qx, 0), Math.max(qy, 0)) + Math.min(Math.max(qx, qy), 0) - r;
}

/** RGBA pixels, straight alpha, row-major. */
export function drawGlyph(size: number, opts: GlyphOptions): Uint8Array {
  if (!Number.isInteger(size) || size < 8 || size > 2048) throw new RangeError(`size must be an integer in 8..2048, got ${size}`);
  const out = new Uint8Array(size * size * 4);
  const [hx, hw, hh, hr, lr] = opts.backdrop ? [0.5, 0.17, 0.4, 0.12, 0.1] : [0.5, 0.25, 0.48, 0.16, 0.15];
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const px = (x + 0.5) / size;
      const py = (y + 0.5) / size;
      // Layers, back to front: [coverage 0..1, colour]. Coverage from the distance gives 1 px anti-aliasing.
      const cover = (d: number) => Math.min(1, Math.max(0, 0.5 - d * size));
      let r = 0;
      let g = 0;
      let b = 0;
      let a = 0;
      const over = (c: number, rgb: Rgb) => {
        r = rgb[0] * c + r * (1 - c);
        g = rgb[1] * c + g * (1 - c);
        b = rgb[2] * c + b * (1 - c);
        a = c + a * (1 - c);
      };
      if (opts.backdrop) over(cover(roundedRect(px, py, 0.5, 0.5, 0.46, 0.46, 0.2)), BACKGROUND);
      over(cover(roundedRect(px, py, hx, 0.5, hw, hh, hr)), HOUSING);
      for (let i = 0; i < 3; i++) {
        const cy = 0.5 + (i - 1) * hh * 0.62;
        over(cover(Math.hypot(px - hx, py - cy) - lr), opts.lit[i] ? LIGHTS[i].on : LIGHTS[i].off);
      }
      const o = (y * size + x) * 4;
      // r, g, b are premultiplied by a: undo it for PNG's straight alpha.
      out[o] = a > 0 ? Math.round(r / a) : 0;
      out[o + 1] = a > 0 ? Math.round(g / a) : 0;
      out[o + 2] = a > 0 ? Math.round(b / a) : 0;
      out[o + 3] = Math.round(a * 255);
    }
  }
  return out;
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32(buf: Uint8Array): number {
  let c = 0xffffffff;
  for (const byte of buf) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "ascii");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** A PNG (8-bit RGBA, no filtering) of `rgba`. */
export function encodePng(width: number, height: number, rgba: Uint8Array): Buffer {
  if (rgba.length !== width * height * 4) throw new RangeError(`expected ${width * height * 4} bytes of RGBA, got ${rgba.length}`);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // colour type RGBA
  const raw = Buffer.alloc((width * 4 + 1) * height);
  for (let y = 0; y < height; y++) {
    raw[y * (width * 4 + 1)] = 0; // filter: none
    raw.set(rgba.subarray(y * width * 4, (y + 1) * width * 4), y * (width * 4 + 1) + 1);
  }
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk("IHDR", ihdr), chunk("IDAT", deflateSync(raw, { level: 9 })), chunk("IEND", new Uint8Array(0))]);
}

const LIT: Readonly<Record<TrayLevel, readonly [boolean, boolean, boolean]>> = {
  critical: [true, false, false],
  warning: [false, true, false],
  ok: [false, false, true],
  offline: [false, false, false],
};

/** The tray icon for a level: the worst alert's light is lit (none when the hub is unreachable). */
export function trayIconPng(level: TrayLevel, size = 32): Buffer {
  return encodePng(size, size, drawGlyph(size, { lit: LIT[level], backdrop: false }));
}

/** The window icon (Linux and Windows title bars, task switchers): every light lit. */
export function appIconPng(size = 256): Buffer {
  return encodePng(size, size, drawGlyph(size, { lit: [true, true, true], backdrop: true }));
}
