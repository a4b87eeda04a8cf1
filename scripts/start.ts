// `npm start`: the desktop app with its hub and the built-in demo. The first run downloads the
// Electron binary (npm ci does not: .npmrc); where that cannot be done (no internet, a proxy), it
// says so in one line and serves web mode instead.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { startDemo } from "../agent/demo/fleet.js";
import { HUB_NODE_FLAGS } from "../main/hub/node-flags.js";
import { electronBinary, fetchElectronBinary } from "./electron-binary.js";
import { buildMainIfNeeded, buildRendererIfNeeded } from "./build-if-needed.js";
import { asksHelp, type LaunchOptions, parseLaunchArgs, START_USAGE } from "./launch-options.js";
import { serveWeb } from "./web.js";

const root = join(import.meta.dirname, "..");

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (asksHelp(argv)) {
    console.log(START_USAGE);
    return;
  }
  let opts: LaunchOptions;
  try {
    opts = parseLaunchArgs(argv);
  } catch (err) {
    console.error(`semscope: ${(err as Error).message}`);
    process.exit(2);
  }
  let electron = opts.web ? { missing: "--web given" } : electronBinary();
  if ("missing" in electron && !opts.web) electron = fetchElectronBinary((line) => console.error(line));
  if ("missing" in electron) {
    console.error(`semscope: Electron cannot start here (${electron.missing}); serving web mode instead.`);
    await serveWeb(opts, "semscope");
    return;
  }
  if (opts.webOnly.length > 0) {
    // Not applied by the desktop app: run without them would be a hub other than the one asked for.
    console.error(`semscope: ${opts.webOnly.join(", ")} ${opts.webOnly.length === 1 ? "is" : "are"} web mode's: the desktop app does not take ${opts.webOnly.length === 1 ? "it" : "them"} (add --web)`);
    process.exit(2);
  }
  if (opts.hub.port === 0) {
    // The demo must know the app's port before it starts, and the app takes no free-port request.
    console.error("semscope: --port 0 picks a free port in web mode only (npm run web, or npm start -- --web)");
    process.exit(2);
  }
  buildRendererIfNeeded();
  buildMainIfNeeded();
  // The hub runs in Electron's main process: its V8 flags must be given at launch (main/hub/node-flags.ts).
  // The app's local hub takes --port and SEMSCOPE_TOKEN over its settings (main/app/launch.ts): the
  // demo below streams to exactly that port with that token.
  const { port, token, record } = opts.hub;
  const args = [`--js-flags=${HUB_NODE_FLAGS.join(" ")}`, root, `--port=${port}`, ...(record !== undefined ? [`--record=${record}`] : []), ...(opts.demo ? [] : ["--no-demo"])];
  const env = { ...process.env, ...(token !== undefined ? { SEMSCOPE_TOKEN: token } : {}) };
  const app = spawn(electron.path, args, { stdio: "inherit", env });
  // The app hosts the hub; the demo streams to it as any real service would.
  const demo = opts.demo ? await startDemo({ url: `http://127.0.0.1:${port}`, token, log: () => {} }) : undefined;
  app.on("exit", (code) => {
    void (demo?.stop() ?? Promise.resolve()).then(() => process.exit(code ?? 0));
  });
}

if (import.meta.url === `file://${process.argv[1]}`) void main();
