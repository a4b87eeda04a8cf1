// Whether the Electron binary is there: the electron package exports the path of the binary it
// downloaded, and throws where the download never happened. `npm ci` never downloads it (.npmrc
// skips electron's postinstall, so an install cannot fail on it); `npm start` runs electron's own
// installer on first use instead (fetchElectronBinary).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const require = createRequire(import.meta.url);

/** The Electron binary's path, or why there is none. */
export function electronBinary(): { path: string } | { missing: string } {
  try {
    const path = require("electron") as unknown;
    if (typeof path === "string" && existsSync(path)) return { path };
    return { missing: "the electron package has no binary" };
  } catch (err) {
    return { missing: (err as Error).message.split("\n")[0] ?? "electron failed to load" };
  }
}

/** A download that takes longer than this is abandoned (a proxy that swallows connections). */
const FETCH_TIMEOUT_MS = 10 * 60_000;

/**
 * Downloads the binary with electron's own installer (`node node_modules/electron/install.js`,
 * its postinstall), honouring ELECTRON_MIRROR, proxies and ELECTRON_SKIP_BINARY_DOWNLOAD as it
 * does. Returns the binary, or in one line why there is none.
 */
export function fetchElectronBinary(log: (line: string) => void): { path: string } | { missing: string } {
  if (process.env.ELECTRON_SKIP_BINARY_DOWNLOAD) return { missing: "ELECTRON_SKIP_BINARY_DOWNLOAD is set, so its binary was not downloaded" };
  let installer: string;
  try {
    installer = join(dirname(require.resolve("electron")), "install.js");
  } catch {
    return { missing: "the electron package is not installed (run npm ci)" };
  }
  log("semscope: downloading Electron's binary with its own installer (first run)");
  const r = spawnSync(process.execPath, [installer], { cwd: dirname(installer), stdio: ["ignore", "inherit", "pipe"], encoding: "utf8", timeout: FETCH_TIMEOUT_MS });
  if (r.status !== 0) {
    const why = r.error?.message ?? r.stderr.split("\n").find((l) => l.trim() !== "") ?? `exit ${r.status ?? r.signal}`;
    return { missing: `its binary could not be downloaded: ${why.trim()}` };
  }
  return electronBinary();
}
