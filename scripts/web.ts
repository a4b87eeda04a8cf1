// `npm run web`: the hub, the dashboard at `/`, and the built-in demo (unless --no-demo). Its first
// stdout line is the hub's (PROTOCOL.md, "Headless hub"); it closes cleanly on SIGINT/SIGTERM.
import { createHub, type Hub } from "../main/hub/index.js";
import { startDemo, type DemoHandle } from "../agent/demo/fleet.js";
import { buildRendererIfNeeded } from "./build-if-needed.js";
import { type LaunchOptions, parseLaunchArgs } from "./launch-options.js";

export async function runWeb(opts: LaunchOptions): Promise<void> {
  const staticDir = buildRendererIfNeeded();
  const hub: Hub = await createHub({ port: opts.port, host: opts.host, token: opts.token, record: opts.record, staticDir });
  console.log(`semscope hub listening on ${hub.url}`);
  const page = opts.token === undefined ? `${hub.url}/` : `${hub.url}/?token=<your token>`;
  console.log(`semscope dashboard: ${page}`);
  let demo: DemoHandle | undefined;
  if (opts.demo) {
    demo = await startDemo({ url: hub.url, token: opts.token, log: (line) => console.error(line) });
    console.log(`semscope demo: ${demo.pids.length} service processes streaming (--no-demo to watch only real agents)`);
  }
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
}

if (import.meta.url === `file://${process.argv[1]}`) {
  let opts: LaunchOptions;
  try {
    opts = parseLaunchArgs(process.argv.slice(2));
  } catch (err) {
    console.error(`semscope web: ${(err as Error).message}`);
    process.exit(2);
  }
  runWeb(opts).catch((err: unknown) => {
    console.error(`semscope web: ${(err as Error).message}`);
    process.exit(1);
  });
}
