// connect()'s options, their defaults and their checks (docs/agent-api.md,
// "Streaming to the app"). A bad option is a programming error and throws at connect(), like the
// Semaphore's own checks; nothing after connect() throws.
import { DEFAULT_HUB_URL, LIMITS } from "../../../shared/protocol/types.js";
import { defaultInstance, implicitService } from "./identity.js";
import { truncate } from "./sanitize.js";

export interface ConnectOptions {
  /** Hub address (scheme, host, port); default SEMSCOPE_URL, else http://127.0.0.1:7420. */
  url?: string;
  /** Hub token; default SEMSCOPE_TOKEN. */
  token?: string;
  /** Logical service name; default SEMSCOPE_SERVICE, else the main script's package name (see defaultService). */
  service?: string;
  /** Replica name; default "<hostname>:<pid>". */
  instance?: string;
  /** Sampling interval; default 1000 ms. */
  intervalMs?: number;
  /** Un-acked sample batches kept while the hub is away (oldest dropped and counted); default 600. */
  bufferBatches?: number;
  /** The same buffer bounded in bytes of JSON; default 16 MiB. Whichever bound is hit first applies. */
  bufferBytes?: number;
}

export const DEFAULT_INTERVAL_MS = 1000;
/** Below this the agent's own work would start to show in the host's latency. */
export const MIN_INTERVAL_MS = 10;
export const DEFAULT_BUFFER_BATCHES = 600;
export const DEFAULT_BUFFER_BYTES = 16 * 1024 * 1024;
/** At least one full-size packet must fit, or the buffer could hold nothing. */
export const MIN_BUFFER_BYTES = 1024 * 1024;

export interface ResolvedOptions {
  url: string;
  token: string | undefined;
  service: string;
  instance: string;
  intervalMs: number;
  bufferBatches: number;
  bufferBytes: number;
}

function optionalString(name: string, v: unknown): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== "string") throw new TypeError(`connect: ${name} must be a string, got ${typeof v}`);
  return v;
}

function fromEnv(name: string): string | undefined {
  const v = process.env[name];
  return v === undefined || v === "" ? undefined : v;
}

function hubUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new TypeError(`connect: url must be an absolute http(s) URL, got ${JSON.stringify(raw)}`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    throw new TypeError(`connect: url must use http or https, got ${u.protocol}`);
  }
  // socket.io reads a path as the namespace; the agent's namespace is appended to the origin.
  if (u.pathname !== "/" && u.pathname !== "") {
    throw new TypeError(`connect: url must not have a path (the agent connects to ${u.origin}/agent), got ${u.pathname}`);
  }
  return u.origin;
}

function positive(name: string, v: unknown, fallback: number, min: number, integer: boolean): number {
  if (v === undefined) return fallback;
  if (typeof v !== "number" || Number.isNaN(v)) throw new TypeError(`connect: ${name} must be a number, got ${typeof v === "number" ? "NaN" : typeof v}`);
  if (!Number.isFinite(v) || v < min || (integer && !Number.isInteger(v))) {
    throw new RangeError(`connect: ${name} must be ${integer ? "an integer" : "finite and"} >= ${min}, got ${v}`);
  }
  return v;
}

export function resolveOptions(options: ConnectOptions | undefined): ResolvedOptions {
  if (options !== undefined && (options === null || typeof options !== "object")) {
    throw new TypeError("connect: options must be an object");
  }
  const o = options ?? {};
  const service = optionalString("service", o.service) ?? implicitService();
  const instance = optionalString("instance", o.instance) ?? defaultInstance();
  if (service === "") throw new RangeError("connect: service must not be empty");
  if (instance === "") throw new RangeError("connect: instance must not be empty");
  return {
    url: hubUrl(optionalString("url", o.url) ?? fromEnv("SEMSCOPE_URL") ?? DEFAULT_HUB_URL),
    // An empty token is no token (an unset variable passed through as "").
    token: optionalString("token", o.token) || fromEnv("SEMSCOPE_TOKEN"),
    // The hub refuses longer strings; a long name is cut rather than the whole hello refused.
    service: truncate(service, LIMITS.maxString),
    instance: truncate(instance, LIMITS.maxString),
    intervalMs: positive("intervalMs", o.intervalMs, DEFAULT_INTERVAL_MS, MIN_INTERVAL_MS, false),
    bufferBatches: positive("bufferBatches", o.bufferBatches, DEFAULT_BUFFER_BATCHES, 1, true),
    bufferBytes: positive("bufferBytes", o.bufferBytes, DEFAULT_BUFFER_BYTES, MIN_BUFFER_BYTES, true),
  };
}
