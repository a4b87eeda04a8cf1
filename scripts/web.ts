// `semscope web` (`npm run web`): the hub, the dashboard at `/`, and the built-in demo (unless
// --no-demo). Its first stdout line is the hub's (docs/protocol.md, "Headless hub"); it closes
// cleanly on SIGINT/SIGTERM. From the repository it builds the dashboard if needed and runs the
// demo from source; from the installed package (the semscope command's bundle) it serves the
// dashboard and runs the demo bundle shipped beside it.
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createHub, HubConfigError, type Hub } from "../main/hub/index.js";
import { DEFAULT_RECORDING_CAP_BYTES } from "../main/app/recordings.js";
import { RollingRecorder } from "../main/hub/recording/recording-rolling.js";
import { createReplayHub } from "../main/hub/recording/replay-hub.js";
import { findDemo } from "../main/app/demo-service.js";
import { startDemo, type DemoHandle, type DemoOptions } from "../agent/demo/fleet.js";
import { buildRendererIfNeeded } from "./build-if-needed.js";
import type { LaunchOptions } from "./launch-options.js";

/** Run from the bundle in dist/cli/ of the installed package, not from the sources through tsx. */
const BUNDLED = !import.meta.url.endsWith(".ts");
const PACKAGE_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", BUNDLED ? ".." : "");

/** The built dashboard: shipped in the package, or built from the sources when they are newer. */
function dashboardDir(): string {
  return BUNDLED ? join(PACKAGE_ROOT, "renderer", "dist") : buildRendererIfNeeded();
}

/** The demo fleet: the bundled service beside the package's command, or the sources. */
function demoSource(): Pick<DemoOptions, "serviceScript" | "fleet"> {
  if (!BUNDLED) return {};
  const plan = findDemo(PACKAGE_ROOT);
  if ("missing" in plan) throw new Error(plan.missing);
  return { serviceScript: plan.script, fleet: plan.fleet };
}

/** `--replay <file>`: the dashboard in replay mode over a recording (docs/protocol.md, "Replay"). */
async function runReplay(opts: LaunchOptions, file: string, staticDir: string): Promise<void> {
  // Ranges saved from the dashboard go next to the recording.
  const { port, host, token, allowedOrigins } = opts.hub;
  const hub = await createReplayHub({ file, port, host, token, allowedOrigins, staticDir, saveDir: dirname(resolve(file)), ...opts.replayLimits });
  // Before the first line, as in runWeb: a signal after it must find its handler.
  const shutdown = (): void => void hub.close().then(() => process.exit(0));
  process.once("SIGINT", shutdown);
  process.once("SIGTERM", shutdown);
  console.log(`semscope hub listening on ${hub.url}`);
  console.log(`semscope replay: ${file} (${hub.session.marks.length} alerts on its timeline)`);
  const message = hub.session.message;
  if (message !== undefined) console.error(`semscope replay: ${message}`);
  console.log(dashboardLine(hub.url, token));
}

/** Where the dashboard is: with a token, the page asks for it (the link does not carry it). */
function dashboardLine(url: string, token: string | undefined): string {
  return `semscope dashboard: ${token === undefined ? `${url}/` : `${url}/?token=<your token>`}`;
}

export async function runWeb(opts: LaunchOptions): Promise<void> {
  const staticDir = dashboardDir();
  if (opts.replay !== undefined) return runReplay(opts, opts.replay, staticDir);
  // `--record-dir`: rolling compact recordings, as the app keeps them.
  const recordSink =
    opts.recordDir === undefined
      ? undefined
      : new RollingRecorder({ dir: opts.recordDir, capBytes: opts.recordCapBytes ?? DEFAULT_RECORDING_CAP_BYTES, log: (line) => console.error(line) });
  const hub: Hub = await createHub({ ...opts.hub, recordSink, staticDir });
  // Before the first line says it is up: a signal that follows that line must find its handler, or
  // the default action ends the process without closing the hub and its recording.
  let demo: DemoHandle | undefined;
  let closing = false;
  const shutdown = (): void => {
    if (closing) return;
    closing = true;
    void (async () => {
      await demo?.stop();
      await hub.close();
      process.exit(0);
    })();
  };
  process.once("SIGINT", shutdown);
  process.once("SIGTERM", shutdown);
  console.log(`semscope hub listening on ${hub.url}`);
  // Where the recordings go, so they can be found (and replayed with --replay <file>).
  if (opts.recordDir !== undefined) {
    const capMb = Math.round((opts.recordCapBytes ?? DEFAULT_RECORDING_CAP_BYTES) / (1024 * 1024));
    console.log(`semscope recording: rolling recordings in ${resolve(opts.recordDir)} (the oldest dropped past ${capMb} MB)`);
  }
  if (opts.hub.record !== undefined) console.log(`semscope recording: ${resolve(opts.hub.record)}`);
  console.log(dashboardLine(hub.url, opts.hub.token));
  if (opts.demo) {
    // The demo's services are agents: with an agent token, they stream with it, as real ones would.
    demo = await startDemo({ url: hub.url, token: opts.hub.agentToken ?? opts.hub.token, log: (line) => console.error(line), ...demoSource() });
    console.log(`semscope demo: ${demo.pids.length} service processes streaming (--no-demo to watch only real agents)`);
  }
}

/**
 * runWeb for a command (`name`: what its error lines start with): a configuration the hub refuses
 * (a token, a host, a URL) exits 2 like a bad flag, anything else (a port in use) exits 1.
 */
export function serveWeb(opts: LaunchOptions, name: string): Promise<void> {
  return runWeb(opts).catch((err: unknown) => {
    process.stderr.write(`${name}: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}\n`);
    process.exit(err instanceof HubConfigError ? 2 : 1);
  });
}
