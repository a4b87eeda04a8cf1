// undici 7.x Pool and Agent: the dispatchers under Node's fetch. A permit is a request on a
// connection: cap = connections × pipelining (per origin for an Agent), inUse = the dispatcher's
// own `stats.running` (requests written and not yet answered in full, including a response whose
// body is still being read or was never read), waiters = `stats.pending` (queued for a connection,
// or assigned to one still being opened). dispatch() is wrapped on the instance: every request(),
// stream(), pipeline(), fetch({ dispatcher }) goes through it. The wrapper passes undici a handler
// of the same style (classic onConnect…onComplete, or onRequestStart…onResponseEnd) that forwards
// every call unchanged and notes three moments: dispatched (wait starts), the request is written to
// a connection (granted), the response is complete or failed (released).
import { AdapterCore, checkInstrumentOptions, claimTarget, type Failure, type Hold, type InstrumentHandle, type InstrumentOptions, patchMethod, releaseTarget, sameShape, type Wait } from "./adapter-core.js";
import { requirePatchable, requireShape, SemscopeAdapterError } from "./adapter-error.js";
import { packageFrames, startCallerWait } from "./caller-frames.js";

const PKG = "undici";
const UNDERSTANDS = "undici 7.x Pool or Agent";
const UNDICI_FRAMES = packageFrames("undici");

type Fn = (this: unknown, ...args: unknown[]) => unknown;
type Handler = Record<string, unknown>;

interface Stats {
  running: number;
  pending: number;
}

interface DispatcherLike {
  dispatch: Fn;
  readonly stats: Stats | Record<string, Stats>;
}

/** A private field of undici's, by its symbol's description (undici keeps them per instance). */
function symbolField(target: object, description: string): unknown {
  for (const s of Object.getOwnPropertySymbols(target)) if (s.description === description) return (target as Record<symbol, unknown>)[s];
  return undefined;
}

/** Looks like an undici dispatcher (Pool, Agent, Client, ...): the version and kind checks come after. */
export function isUndiciDispatcher(target: unknown): boolean {
  if (target === null || typeof target !== "object") return false;
  const t = target as Record<string, unknown>;
  return typeof t.dispatch === "function" && typeof t.request === "function" && typeof t.pipeline === "function" && typeof t.compose === "function";
}

type Kind = "pool" | "agent";

function kindOf(target: object): Kind {
  // A Pool keeps its connection limit and its own queue; an Agent keeps one dispatcher per origin.
  if (symbolField(target, "clients") instanceof Map && symbolField(target, "origins") instanceof Set) return "agent";
  if (Array.isArray(symbolField(target, "clients")) && "queued" in ((target as DispatcherLike).stats as object)) return "pool";
  throw new SemscopeAdapterError(PKG, "not a Pool or an Agent (a Client, BalancedPool or proxy agent is not supported: instrument the Pool or Agent it uses)", UNDERSTANDS);
}

export function instrumentUndici(target: object, options: InstrumentOptions): InstrumentHandle {
  requireShape(PKG, UNDERSTANDS, target, { dispatch: "function", request: "function", close: "function", destroy: "function", stats: "object", closed: "boolean", destroyed: "boolean" });
  const kind = kindOf(target);
  const d = target as DispatcherLike;
  const opts = symbolField(target, "options") as { connections?: number | null; pipelining?: number } | undefined;
  if (opts === undefined || typeof opts !== "object") throw new SemscopeAdapterError(PKG, "its options are not where undici 7 keeps them", UNDERSTANDS);
  const connections = kind === "pool" ? (symbolField(target, "connections") as number | null) : (opts.connections ?? null);
  const permits = (options as Partial<InstrumentOptions> | null)?.permits;
  if (connections && permits !== undefined) {
    throw new SemscopeAdapterError(PKG, `permits is for a pool without a connection limit; this one has connections: ${connections}`, UNDERSTANDS);
  }
  if (!connections && permits === undefined) {
    throw new SemscopeAdapterError(PKG, "connections is unlimited (undici's default): there is no cap to watch; set connections, or pass permits as the cap to report", UNDERSTANDS);
  }
  requirePatchable(PKG, UNDERSTANDS, target, ["dispatch"]);
  const o = checkInstrumentOptions(PKG, options);
  claimTarget(PKG, target);

  // Each connection runs up to `pipelining` requests at once (0 and 1 both mean one).
  const perOrigin = connections ? connections * Math.max(1, opts.pipelining ?? 1) : o.permits!;
  const own = d.dispatch;
  let unpatch: () => void = () => undefined;

  const core = new AdapterCore(o, {
    kind: kind === "pool" ? "undici-pool" : "undici-agent",
    // A Pool's queue is a FIFO, and its connections take requests in order.
    queue: "fifo",
    blind: [],
    maxWaiters: null,
    acquireTimeoutMs: null,
    gauges:
      kind === "pool"
        ? () => {
            const s = d.stats as Stats;
            return { cap: perOrigin, inUse: s.running, waiters: s.pending };
          }
        : () => {
            // One pool per origin: the cap grows with the origins the Agent has open.
            let origins = 0;
            let inUse = 0;
            let waiters = 0;
            for (const s of Object.values(d.stats as Record<string, Stats>)) {
              origins++;
              inUse += s.running;
              waiters += s.pending;
            }
            return { cap: perOrigin * Math.max(1, origins), inUse, waiters };
          },
    restore: () => {
      unpatch();
      releaseTarget(target);
    },
  });

  const dispatch = sameShape(function dispatch(this: unknown, opts: unknown, handler: unknown): unknown {
    if (!core.tracking || this !== target || handler === null || typeof handler !== "object") return own.call(this, opts, handler);
    const h = handler as Handler;
    const modern = typeof h.onRequestStart === "function";
    // A handler undici would refuse goes to undici as it is, for undici's own error.
    if (modern ? typeof h.onResponseError !== "function" : !validClassic(h, opts)) return own.call(this, opts, handler);
    const w = startCallerWait(core, dispatch, UNDICI_FRAMES);
    return own.call(this, opts, modern ? new ModernHandler(h, core, w) : new ClassicHandler(h, core, w));
  }, own);
  unpatch = patchMethod(target, "dispatch", dispatch);
  return core;
}

/** What undici's assertRequestHandler asks of a classic handler. */
function validClassic(h: Handler, opts: unknown): boolean {
  if (typeof h.onConnect !== "function" || typeof h.onError !== "function") return false;
  const o = opts as { upgrade?: unknown; method?: unknown } | null;
  const upgrade = o !== null && typeof o === "object" && (Boolean(o.upgrade) || o.method === "CONNECT");
  if (upgrade) return typeof h.onUpgrade === "function";
  return typeof h.onHeaders === "function" && typeof h.onData === "function" && typeof h.onComplete === "function";
}

function failureOf(err: unknown): Failure {
  const code = (err as { code?: unknown } | null)?.code;
  const name = (err as { name?: unknown } | null)?.name;
  if (code === "UND_ERR_ABORTED" || name === "AbortError") return "abort";
  if (code === "UND_ERR_CONNECT_TIMEOUT") return "timeout";
  if (code === "UND_ERR_CLOSED" || code === "UND_ERR_DESTROYED" || code === "UND_ERR_MAX_ORIGINS_REACHED") return "rejection";
  return "error";
}

const noop = (): void => undefined;

/** One request's three moments; shared by both handler styles. */
class Tracked {
  private hold: Hold | undefined;
  private ended = false;

  constructor(
    protected readonly h: Handler,
    private readonly core: AdapterCore,
    private readonly w: Wait,
  ) {}

  /**
   * The grant comes after the handler's own onConnect/onRequestStart: a request aborted while it waited is
   * aborted there, by the handler, as a connection picks it up (its onError comes first), and
   * counts as an abort, not a grant.
   */
  protected start(method: "onConnect" | "onRequestStart", a: unknown, context: unknown): unknown {
    try {
      return (this.h[method] as Fn).call(this.h, a, context);
    } finally {
      if (this.hold === undefined && !this.ended) this.hold = this.core.granted(this.w);
    }
  }

  /** Complete (err undefined) or failed; undici may report an error after a completion whose handler threw. */
  protected finish(err: unknown): void {
    if (this.ended) return;
    this.ended = true;
    if (this.hold !== undefined) this.core.released(this.hold, noop);
    else this.core.failed(this.w, err === undefined ? "error" : failureOf(err));
  }

  /** An optional method of the caller's handler, called only if it has one (as undici does). */
  protected optional(name: string, args: unknown[]): unknown {
    const f = this.h[name];
    return typeof f === "function" ? (f as Fn).apply(this.h, args) : undefined;
  }
}

/** undici's classic handler API (what its request(), stream(), Node's fetch use). */
class ClassicHandler extends Tracked {
  onConnect(abort: unknown, context: unknown): unknown {
    return this.start("onConnect", abort, context);
  }
  onResponseStarted(...args: unknown[]): unknown {
    return this.optional("onResponseStarted", args);
  }
  onHeaders(statusCode: unknown, headers: unknown, resume: unknown, statusText: unknown): unknown {
    return (this.h.onHeaders as Fn).call(this.h, statusCode, headers, resume, statusText);
  }
  onData(chunk: unknown): unknown {
    return (this.h.onData as Fn).call(this.h, chunk);
  }
  onBodySent(...args: unknown[]): unknown {
    return this.optional("onBodySent", args);
  }
  onRequestSent(...args: unknown[]): unknown {
    return this.optional("onRequestSent", args);
  }
  onUpgrade(...args: unknown[]): unknown {
    // Upgraded, the socket leaves the pool: the request's hold on the connection ends here.
    this.finish(undefined);
    return (this.h.onUpgrade as Fn).apply(this.h, args);
  }
  onComplete(trailers: unknown): unknown {
    this.finish(undefined);
    return (this.h.onComplete as Fn).call(this.h, trailers);
  }
  onError(err: unknown): unknown {
    this.finish(err ?? new Error("no error object"));
    return (this.h.onError as Fn).call(this.h, err);
  }
}

/** undici 7's controller-based handler API (onRequestStart … onResponseEnd); undici calls every method but onResponseError only if present. */
class ModernHandler extends Tracked {
  onRequestStart(controller: unknown, context: unknown): unknown {
    return this.start("onRequestStart", controller, context);
  }
  onResponseStarted(...args: unknown[]): unknown {
    return this.optional("onResponseStarted", args);
  }
  onResponseStart(...args: unknown[]): unknown {
    return this.optional("onResponseStart", args);
  }
  onResponseData(...args: unknown[]): unknown {
    return this.optional("onResponseData", args);
  }
  onRequestUpgrade(...args: unknown[]): unknown {
    this.finish(undefined);
    return this.optional("onRequestUpgrade", args);
  }
  onResponseEnd(...args: unknown[]): unknown {
    this.finish(undefined);
    return this.optional("onResponseEnd", args);
  }
  onResponseError(controller: unknown, err: unknown): unknown {
    this.finish(err ?? new Error("no error object"));
    return (this.h.onResponseError as Fn).call(this.h, controller, err);
  }
}
