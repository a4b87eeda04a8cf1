// Where the shell's files are, and what the command line asks of it.
import { join } from "node:path";

/**
 * The built dashboard. Packaged, it is unpacked next to app.asar (electron-builder asarUnpack), so
 * the hub serves it from a plain folder; in development it is renderer/dist in the checkout.
 */
export function rendererDir(appPath: string, isPackaged: boolean): string {
  return join(unpackedAppDir(appPath, isPackaged), "renderer", "dist");
}

export interface LaunchArgs {
  /** `--record <file>` or `--record=<file>`: the local hub records to this NDJSON file. */
  record?: string;
  /** `--no-demo`: no built-in demo this run, whatever the settings say (`npm start` runs its own). */
  noDemo?: boolean;
  /**
   * `--port <n>` or `--port=<n>`: the local hub listens there this run, whatever the settings say
   * (`npm start --port`, whose demo streams to that port). Not saved into the settings.
   */
  port?: number;
  /** Flags of ours given a value they cannot take, one line each: the app says so and goes on without them. */
  problems?: string[];
}

/**
 * The folder holding the app's dist/ as plain files: the bundled demo is run from there, by
 * processes that read it with plain fs (electron-builder asarUnpack), like the dashboard.
 */
export function unpackedAppDir(appPath: string, isPackaged: boolean): string {
  return isPackaged ? appPath.replace(/\.asar$/, ".asar.unpacked") : appPath;
}

/** Our flags among Electron's and Chromium's; anything unknown is left alone. */
export function parseLaunchArgs(argv: readonly string[]): LaunchArgs {
  const out: LaunchArgs = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--record" && i + 1 < argv.length && !argv[i + 1].startsWith("--")) out.record = argv[++i];
    else if (a.startsWith("--record=") && a.length > "--record=".length) out.record = a.slice("--record=".length);
    else if (a === "--no-demo") out.noDemo = true;
    else if (a === "--port" || a.startsWith("--port=")) {
      const raw = a === "--port" ? (i + 1 < argv.length ? argv[++i] : "") : a.slice("--port=".length);
      const port = /^\d{1,5}$/.test(raw) ? Number(raw) : NaN;
      if (port >= 1 && port <= 65535) out.port = port;
      else (out.problems ??= []).push(`--port must be an integer from 1 to 65535, got ${JSON.stringify(raw)}: using the port in Settings`);
    }
  }
  return out;
}
