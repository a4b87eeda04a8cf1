#!/usr/bin/env node
// Draws build/icon.png (512×512), the installers' icon: a signal head with red, amber and green
// lights on a rounded square. Only node:zlib; run `node build/make-icon.mjs` after changing it.
// The app draws the same glyph at run time for its window and tray (main/app/icon-art.ts).
import { writeFileSync } from "node:fs";
import { deflateSync } from "node:zlib";

const SIZE = Number(process.argv[2] ?? 512);
const OUT = new URL(process.argv[3] ?? "./icon.png", import.meta.url);

const BACKDROP = [0x1f, 0x29, 0x37];
const HOUSING = [0x0b, 0x0f, 0x19];
const LIGHTS = [
  [0xef, 0x44, 0x44],
  [0xf5, 0x9e, 0x0b],
  [0x22, 0xc5, 0x5e],
];

function roundedRect(px, py, cx, cy, hw, hh, r) {
  const qx = Math.abs(px - cx) - hw + r;
  const qy = Math.abs(py - cy) - hh + r;
  return Math.hypot(Math.max(qx, 0), Math.max(qy, 0)) + Math.min(Math.max(qx, qy), 0) - r;
}

function draw(size) {
  const out = Buffer.alloc(size * size * 4);
  const [hx, hw, hh, hr, lr] = [0.5, 0.17, 0.4, 0.12, 0.1];
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const px = (x + 0.5) / size;
      const py = (y + 0.5) / size;
      const cover = (d) => Math.min(1, Math.max(0, 0.5 - d * size));
      let [r, g, b, a] = [0, 0, 0, 0];
      const over = (c, rgb) => {
        r = rgb[0] * c + r * (1 - c);
        g = rgb[1] * c + g * (1 - c);
        b = rgb[2] * c + b * (1 - c);
        a = c + a * (1 - c);
      };
      over(cover(roundedRect(px, py, 0.5, 0.5, 0.46, 0.46, 0.2)), BACKDROP);
      over(cover(roundedRect(px, py, hx, 0.5, hw, hh, hr)), HOUSING);
      for (let i = 0; i < 3; i++) over(cover(Math.hypot(px - hx, py - (0.5 + (i - 1) * hh * 0.62)) - lr), LIGHTS[i]);
      const o = (y * size + x) * 4;
      out[o] = a > 0 ? Math.round(r / a) : 0;
      out[o + 1] = a > 0 ? Math.round(g / a) : 0;
      out[o + 2] = a > 0 ? Math.round(b / a) : 0;
      out[o + 3] = Math.round(a * 255);
    }
  }
  return out;
}

const CRC = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf) {
  let c = 0xffffffff;
  for (const byte of buf) c = CRC[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}
function png(size, rgba) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // RGBA
  const stride = size * 4;
  const raw = Buffer.alloc((stride + 1) * size);
  for (let y = 0; y < size; y++) rgba.copy(raw, y * (stride + 1) + 1, y * stride, (y + 1) * stride);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(raw, { level: 9 })),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

writeFileSync(OUT, png(SIZE, draw(SIZE)));
console.log(`wrote ${OUT.pathname} (${SIZE}×${SIZE})`);
