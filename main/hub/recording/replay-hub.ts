// A hub that serves a recording instead of live agents: the dashboard at `/` (web mode), the same
// `/ui` namespace over the replay session's core, and `/replay` for the timeline and the time
// cursor (docs/protocol.md, "Replay"). It accepts no agents. Loopback only unless a token is set,
// like the live hub.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "socket.io";
import { z } from "zod";
import { LIMITS, parsePayload, type Ack } from "../../../shared/protocol/index.js";
import { REPLAY_NAMESPACE, UI_LIMITS, type HubToReplayEvents, type ReplayStatus, type ReplayToHubEvents } from "../../../shared/ui-protocol/index.js";
import { contained, reply, splitArgs } from "../socket/listener.js";
import { TokenCheck } from "../auth.js";
import type { HubCore } from "../core/hub-core.js";
import { HubConfigError, isLoopback, urlHost } from "../options.js";
import { RequestGuard } from "../request-guard.js";
import { ReplaySession, type ReplaySessionOptions } from "./replay-session.js";
import { StaticFiles } from "../dashboard/static-files.js";
import { UiNamespace } from "../dashboard/ui-namespace.js";

export interface ReplayHubOptions extends ReplaySessionOptions {
  file: string;
  port?: number;
  host?: string;
  token?: string;
  staticDir?: string;
  allowedOrigins?: readonly string[];
  log?: (line: string) => void;
  ui?: { deltaIntervalMs?: number };
  /** Where `replay:save` writes named ranges; absent: saving is off. */
  saveDir?: string;
  /** Ranges `replay:save` writes at most in this hub's life (default MAX_SAVES). */
  maxSaves?: number;
}

/** Each save can be as large as the recording itself: this many bound what one replay can write. */
export const MAX_SAVES = 20;

export interface ReplayHub {
  readonly url: string;
  readonly port: number;
  readonly session: ReplaySession;
  close(): Promise<void>;
}

const READ_ONLY = "a replay is read-only: change thresholds and acknowledge alerts on the live hub";

/** The session's current core, looked up on every access: a backward seek replaces it. */
function coreView(session: ReplaySession): HubCore {
  return new Proxy({} as HubCore, {
    get(_target, prop) {
      const core = session.current;
      if (prop === "acknowledge") return () => undefined;
      if (prop === "setThresholds") {
        return () => {
          throw new Error(READ_ONLY);
        };
      }
      const v: unknown = Reflect.get(core, prop, core);
      return typeof v === "function" ? (v as (...args: unknown[]) => unknown).bind(core) : v;
    },
  });
}

const seekSchema = z.object({ t: z.number().refine(Number.isFinite, { error: "must be a finite number" }) });
const playSchema = z.union([z.object({ speed: z.number().min(1).max(60).optional() }), z.undefined(), z.null()]);
const emptySchema = z.union([z.object({}), z.undefined(), z.null()]);
const saveSchema = z.object({
  name: z.string().max(200),
  from: z.number().refine(Number.isFinite, { error: "must be a finite number" }),
  to: z.number().refine(Number.isFinite, { error: "must be a finite number" }),
});

export async function createReplayHub(opts: ReplayHubOptions): Promise<ReplayHub> {
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const host = opts.host ?? "127.0.0.1";
  if (!isLoopback(host) && opts.token === undefined) throw new HubConfigError(`a replay hub on ${host} needs a token (it would serve the recording to anyone)`);
  let staticFiles: StaticFiles | undefined;
  if (opts.staticDir !== undefined) staticFiles = await StaticFiles.open(opts.staticDir);
  const session = await ReplaySession.open(opts.file, opts);
  const tokens = new TokenCheck(opts.token);
  const guard = new RequestGuard(isLoopback(host), opts.allowedOrigins ?? []);

  const http = createServer((req: IncomingMessage, res: ServerResponse) => {
    const refusal = guard.refuse(req);
    if (refusal !== null) {
      res.writeHead(403, { "Content-Type": "text/plain" }).end(refusal);
      return;
    }
    const pathname = (req.url ?? "/").split("?")[0];
    if (pathname.startsWith("/socket.io")) return;
    if (staticFiles !== undefined && !pathname.startsWith("/api/")) {
      staticFiles.serve(req, res, pathname).catch(() => res.destroy());
      return;
    }
    res.writeHead(404, { "Content-Type": "text/plain" }).end("not found: this hub replays a recording");
  });
  const io = new Server(http, {
    maxHttpBufferSize: LIMITS.maxPacketBytes,
    serveClient: false,
    allowRequest: (req, callback) => {
      const refusal = guard.refuse(req);
      callback(refusal, refusal === null);
    },
  });
  io.of("/").use((_socket, next) => next(new Error("unknown namespace: use /ui or /replay")));
  const view = coreView(session);
  const ui = new UiNamespace(io, view, tokens, {
    deltaIntervalMs: opts.ui?.deltaIntervalMs ?? UI_LIMITS.deltaIntervalMs,
    maxBufferedBytes: UI_LIMITS.maxBufferedBytes,
    maxBufferedPackets: UI_LIMITS.maxBufferedPackets,
    log,
  });

  const replay = io.of(REPLAY_NAMESPACE);
  replay.use((socket, next) => {
    const why = tokens.refuseHandshake(socket.handshake.auth);
    next(why === null ? undefined : new Error(why));
  });
  const status = (): ReplayStatus => ({ ...session.status(), ...(opts.saveDir !== undefined ? { saveTo: opts.saveDir } : {}) });
  const answer = (run: () => void): Ack<{ status: ReplayStatus }> => {
    try {
      run();
      return { ok: true, status: status() };
    } catch (err) {
      return { ok: false, error: err instanceof Error ? err.message : String(err) };
    }
  };
  const maxSaves = opts.maxSaves ?? MAX_SAVES;
  /** Saves written or under way; a failed one gives its turn back. */
  let saves = 0;
  replay.on("connection", (socket) => {
    socket.emit("replay:status" satisfies keyof HubToReplayEvents, status());
    const on = (name: keyof ReplayToHubEvents, handle: (payload: unknown) => Ack<{ status: ReplayStatus }>) =>
      socket.on(name, (...args: unknown[]) => {
        const { payload, ack } = splitArgs(args);
        reply(ack, contained(`replay ${name}`, log, { ok: false, error: "internal error" }, () => handle(payload)));
      });
    // A long seek runs in slices (the hub answers meanwhile); its answer comes once the cursor has
    // landed, there or where a later seek took it.
    socket.on("replay:seek", (...args: unknown[]) => {
      const { payload, ack } = splitArgs(args);
      const p = parsePayload(seekSchema, payload);
      if (!p.ok) return reply(ack, { ok: false, error: p.error });
      session.seekInSlices(p.value.t).then(
        () => reply(ack, { ok: true, status: status() }),
        (err: unknown) => {
          log(`semscope hub: replay replay:seek failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
          reply(ack, { ok: false, error: "internal error" });
        },
      );
    });
    on("replay:play", (payload) => {
      const p = parsePayload(playSchema, payload);
      return p.ok ? answer(() => session.play(p.value?.speed)) : { ok: false, error: p.error };
    });
    on("replay:pause", (payload) => {
      const p = parsePayload(emptySchema, payload);
      return p.ok ? answer(() => session.pause()) : { ok: false, error: p.error };
    });
    socket.on("replay:save", (...args: unknown[]) => {
      const { payload, ack } = splitArgs(args);
      const p = parsePayload(saveSchema, payload);
      if (!p.ok) return reply(ack, { ok: false, error: p.error });
      const dir = opts.saveDir;
      if (dir === undefined) return reply(ack, { ok: false, error: "this replay cannot save ranges" });
      if (saves >= maxSaves) {
        return reply(ack, { ok: false, error: `this replay has saved ${maxSaves} ranges, its limit: open the recording again to save more` });
      }
      saves++;
      session.saveRange(dir, p.value.name, p.value.from, p.value.to).then(
        (file) => reply(ack, { ok: true, file }),
        (err: unknown) => {
          saves--;
          reply(ack, { ok: false, error: err instanceof Error ? err.message : String(err) });
        },
      );
    });
  });
  session.onReset(() => contained("replay resync", log, undefined, () => ui.resync()));
  session.onStatus(() => replay.emit("replay:status", status()));

  const port = await new Promise<number>((resolve, reject) => {
    http.once("error", reject);
    http.listen(opts.port ?? 0, host, () => {
      http.off("error", reject);
      resolve((http.address() as AddressInfo).port);
    });
  });
  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost(host)}:${port}`,
    port,
    session,
    close: () =>
      (closing ??= (async () => {
        session.close();
        ui.close();
        const closed = io.close();
        http.closeAllConnections();
        await closed.catch(() => undefined);
      })()),
  };
}
