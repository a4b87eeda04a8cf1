// Where the shell's files are, and what the command line asks of it.
import { join } from "node:path";

/**
 * The built dashboard. Packaged, it is unpacked next to app.asar (electron-builder asarUnpack), so
 * the hub serves it from a plain folder; in development it is renderer/dist in the checkout.
 */
export function rendererDir(appPath: string, isPackaged: boolean): string {
  const base = isPackaged ? appPath.replace(/\.asar$/, ".asar.unpacked") : appPath;
  return join(base, "renderer", "dist");
}

export interface LaunchArgs {
  /** `--record <file>` or `--record=<file>`: the local hub records to this NDJSON file. */
  record?: string;
}

/** Our flags among Electron's and Chromium's; anything unknown is left alone. */
export function parseLaunchArgs(argv: readonly string[]): LaunchArgs {
  const out: LaunchArgs = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--record" && i + 1 < argv.length && !argv[i + 1].startsWith("--")) out.record = argv[++i];
    else if (a.startsWith("--record=") && a.length > "--record=".length) out.record = a.slice("--record=".length);
  }
  return out;
}
