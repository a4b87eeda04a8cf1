// Per-point histograms in a fixed, small number of bytes, so that 24 h of mergeable minute
// histograms fit the per-semaphore memory budget (history-options.ts has the figures). A slot of
// `size` bytes holds one of two forms:
//
//   [0] tag: 0 empty · 1 pairs · 255 sketch
//   pairs:  [1 + 2i] bucket, [2 + 2i] count code (code 0 ends the list); up to (size − 1) / 2 buckets
//   sketch: [1..2] share of bucket 0 as u16 / 65535, then [3 ..] the bucket holding each rank of
//           rankGrid(size − 3) within the rest: its min, p10 … p50 … p99, p99.9, its max
//
// Pairs keep the one bucket layout of ../histogram.ts, so a histogram with few buckets (a quiet
// second, a steady minute) merges exactly. A wider one becomes a sketch: its CDF at fixed ranks,
// dense where p90 … p99.9 are read, decoded as piecewise uniform between those points. Immediate
// grants (bucket 0, under 1 µs) are kept apart as a share, because interpolating from them to a
// millisecond body would invent waits nobody had. Simulated 1 h merges of 60 log-normal minutes
// and 3-replica fleet merges land within one bucket (9 %) at p50, p90 and p99 with a 14-point
// sketch; a histogram of a few dozen samples has gaps between its largest values that no sketch
// keeps, and a merged p99 over such histograms can be off by that gap.
//
// A slot stores a distribution's shape; the row's count is its weight when decoded. Count codes
// are a minifloat (4-bit exponent, 4-bit mantissa): exact for 0..31, within ±1/32 above.

import { BUCKETS as LAYOUT_BUCKETS, type SparseHist } from "../histogram.js";

// A local copy: some loaders compile an imported binding to a getter, and this is read in hot loops.
const BUCKETS: number = LAYOUT_BUCKETS;

const CODES = 256;
const DECODE = new Float64Array(CODES);
for (let code = 0; code < CODES; code++) {
  const e = code >> 4;
  const m = code & 15;
  DECODE[code] = e === 0 ? m : (16 + m) * 2 ** (e - 1);
}

/** The largest count one code holds; larger counts in a pairs slot are scaled down together. */
export const MAX_CODED_COUNT = DECODE[CODES - 1];

/** Smallest slot: a tag, a bucket-0 share and a sketch of two points (min and max). */
export const MIN_HIST_BYTES = 5;
/** Largest slot: beyond this a row costs more than a plain sparse histogram would. */
export const MAX_HIST_BYTES = 32;

const TAG_EMPTY = 0;
const TAG_PAIRS = 1;
const TAG_SKETCH = 255;
const SHARE_ONE = 65535;

/** Code of a count > 0 (rounded to nearest; never 0, so a non-empty bucket stays visible). */
export function encodeCount(x: number): number {
  if (!(x > 0)) return 0;
  const v = Math.max(1, Math.round(x));
  if (v < 32) return v; // codes 0..31 are the counts themselves (exponents 0 and 1)
  let e = 27 - Math.clz32(v); // v / 2^e in [16, 32)
  let m = Math.round(v / 2 ** e);
  if (m === 32) {
    m = 16;
    e += 1;
  }
  return e + 1 > 15 ? CODES - 1 : ((e + 1) << 4) | (m - 16);
}

export function decodeCount(code: number): number {
  return DECODE[code & 255];
}

// Ranks a sketch keeps, most wanted first: the percentiles charts and alerts read, then the body.
const RANK_PRIORITY = [0.5, 0.9, 0.99, 0.999, 0.95, 0.75, 0.25, 0.98, 0.995, 0.1, 0.8, 0.35, 0.65, 0.2, 0.05];
const grids = new Map<number, Float64Array>();

/** The ranks of an m-point sketch: 0 (min), the m − 2 most wanted ranks ascending, 1 (max). */
export function rankGrid(m: number): Float64Array {
  let grid = grids.get(m);
  if (grid === undefined) {
    const ranks = [0, 1, ...RANK_PRIORITY.slice(0, m - 2)].sort((a, b) => a - b);
    while (ranks.length < m) {
      // Past the list, halve the widest gap: more points, evenly spread.
      let widest = 0;
      for (let i = 1; i < ranks.length - 1; i++) if (ranks[i + 1] - ranks[i] > ranks[widest + 1] - ranks[widest]) widest = i;
      ranks.splice(widest + 1, 0, (ranks[widest] + ranks[widest + 1]) / 2);
    }
    grid = Float64Array.from(ranks);
    grids.set(m, grid);
  }
  return grid;
}

// Scratch for packing. Pushes are synchronous and never interleave, so one set serves every history.
const dense = new Float64Array(BUCKETS);
const nzB = new Uint8Array(BUCKETS);
const nzC = new Float64Array(BUCKETS);

/**
 * Adds a wire histogram into dense counts (bucket b at `at + b`), skipping malformed pairs (bucket
 * not an integer in 0..255, count not finite and > 0) rather than corrupting neighbours. Returns
 * the mass added.
 */
export function addSparseInto(counts: Float64Array, hist: SparseHist, at = 0): number {
  let mass = 0;
  for (let i = 0; i < hist.length; i++) {
    const b = hist[i][0];
    const c = hist[i][1];
    if (Number.isInteger(b) && b >= 0 && b < BUCKETS && c > 0 && Number.isFinite(c)) {
      counts[at + b] += c;
      mass += c;
    }
  }
  return mass;
}

/**
 * Packs a wire histogram into the slot `out[off .. off+size)`. A wire histogram is normally
 * ascending in bucket (the protocol requires it): its non-empty pairs are then the packer's input
 * as they are, without a pass over all 256 buckets and a clear of them, which cost more than the
 * rest of storing a sample. Anything else (unsorted, repeated, malformed) goes through dense counts.
 */
export function packSparse(hist: SparseHist, out: Uint8Array, off: number, size: number): void {
  let n = 0;
  let mass = 0;
  let prev = -1;
  for (let i = 0; i < hist.length; i++) {
    const b = hist[i][0];
    const c = hist[i][1];
    if (!(Number.isInteger(b) && b > prev && b < BUCKETS)) return packSparseDense(hist, out, off, size);
    prev = b;
    // As addSparseInto: a count that is not finite and > 0 is skipped.
    if (c > 0 && Number.isFinite(c)) {
      nzB[n] = b;
      nzC[n] = c;
      mass += c;
      n++;
    }
  }
  writeSlot(n, mass, out, off, size);
}

function packSparseDense(hist: SparseHist, out: Uint8Array, off: number, size: number): void {
  addSparseInto(dense, hist);
  packDense(dense, out, off, size);
  dense.fill(0);
}

/** Packs dense bucket counts (`counts[at .. at + BUCKETS)`) into the slot `out[off .. off+size)`. */
export function packDense(counts: ArrayLike<number>, out: Uint8Array, off: number, size: number, at = 0): void {
  let n = 0;
  let mass = 0;
  for (let b = 0; b < BUCKETS; b++) {
    const c = counts[at + b];
    if (c > 0) {
      nzB[n] = b;
      nzC[n] = c;
      mass += c;
      n++;
    }
  }
  writeSlot(n, mass, out, off, size);
}

/** Writes the slot from the first `n` entries of nzB / nzC (ascending buckets, counts > 0). */
function writeSlot(n: number, mass: number, out: Uint8Array, off: number, size: number): void {
  // A loop, not out.fill(): for 13 bytes the builtin's call costs more than the stores.
  for (let i = off; i < off + size; i++) out[i] = 0;
  if (n === 0) return;
  if (n <= (size - 1) >> 1) writePairs(n, out, off);
  else writeSketch(n, mass, out, off, size);
}

function writePairs(n: number, out: Uint8Array, off: number): void {
  let maxC = 0;
  for (let i = 0; i < n; i++) if (nzC[i] > maxC) maxC = nzC[i];
  // Only the shape is kept (the row's count is the weight), so scaling every count alike is free.
  const scale = maxC > MAX_CODED_COUNT ? MAX_CODED_COUNT / maxC : 1;
  out[off] = TAG_PAIRS;
  for (let i = 0; i < n; i++) {
    out[off + 1 + 2 * i] = nzB[i];
    out[off + 2 + 2 * i] = encodeCount(nzC[i] * scale);
  }
}

function writeSketch(n: number, mass: number, out: Uint8Array, off: number, size: number): void {
  const first = nzB[0] === 0 ? 1 : 0;
  const zero = first === 1 ? nzC[0] : 0;
  const share = Math.round((zero / mass) * SHARE_ONE);
  out[off] = TAG_SKETCH;
  out[off + 1] = share & 255;
  out[off + 2] = share >>> 8;
  const m = size - 3;
  const ranks = rankGrid(m);
  const rest = mass - zero;
  const pts = off + 3;
  out[pts] = nzB[first];
  out[pts + m - 1] = nzB[n - 1];
  // One ascending pass finds every rank's bucket, by nearest rank as DenseHist does.
  let i = first;
  let cum = 0;
  for (let r = 1; r < m - 1; r++) {
    const target = Math.max(1, Math.ceil(ranks[r] * rest));
    while (i < n - 1 && cum + nzC[i] < target) cum += nzC[i++];
    out[pts + r] = nzB[i];
  }
}

/** The slot holds no histogram. */
export function isEmptySlot(slot: Uint8Array, off: number): boolean {
  return slot[off] === TAG_EMPTY;
}

/**
 * Adds the slot's distribution, scaled to total `weight`, into `dst`. Returns the mass added:
 * `weight`, or 0 for an empty slot or a weight that is not > 0.
 */
export function addPacked(dst: Float64Array, slot: Uint8Array, off: number, size: number, weight: number): number {
  const tag = slot[off];
  if (tag === TAG_EMPTY || !(weight > 0)) return 0;
  if (tag === TAG_PAIRS) {
    const pairs = (size - 1) >> 1;
    let sum = 0;
    for (let i = 0; i < pairs && slot[off + 2 + 2 * i] !== 0; i++) sum += DECODE[slot[off + 2 + 2 * i]];
    const scale = weight / sum;
    for (let i = 0; i < pairs && slot[off + 2 + 2 * i] !== 0; i++) {
      dst[slot[off + 1 + 2 * i]] += DECODE[slot[off + 2 + 2 * i]] * scale;
    }
    return weight;
  }
  const share = (slot[off + 1] | (slot[off + 2] << 8)) / SHARE_ONE;
  dst[0] += weight * share;
  const rest = weight - weight * share;
  const m = size - 3;
  const ranks = rankGrid(m);
  const pts = off + 3;
  // The CDF passes through the lower edge of the min bucket, the middle of each rank's bucket
  // and the upper edge of the max bucket; mass between two points is spread evenly.
  let xa = slot[pts];
  for (let r = 0; r < m - 1; r++) {
    const xb = r + 1 === m - 1 ? slot[pts + m - 1] + 1 : slot[pts + r + 1] + 0.5;
    spread(dst, xa, xb, (ranks[r + 1] - ranks[r]) * rest);
    xa = xb;
  }
  return weight;
}

function spread(dst: Float64Array, a: number, b: number, mass: number): void {
  if (mass <= 0) return;
  if (b - a <= 0) {
    dst[Math.min(BUCKETS - 1, Math.floor(a))] += mass;
    return;
  }
  const perUnit = mass / (b - a);
  for (let k = Math.floor(a); k < b; k++) {
    const overlap = Math.min(b, k + 1) - Math.max(a, k);
    if (overlap > 0) dst[k] += overlap * perUnit;
  }
}

/** A slot decoded to dense counts with total `weight` (tests and debugging). */
export function unpackDense(slot: Uint8Array, off: number, size: number, weight: number): Float64Array {
  const out = new Float64Array(BUCKETS);
  addPacked(out, slot, off, size, weight);
  return out;
}
