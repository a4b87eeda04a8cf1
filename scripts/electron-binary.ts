// Whether the Electron binary is there: the electron package exports the path of the binary it
// downloaded at install time, and throws where the download never happened.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";

/** The Electron binary's path, or why there is none. */
export function electronBinary(): { path: string } | { missing: string } {
  try {
    const path = createRequire(import.meta.url)("electron") as unknown;
    if (typeof path === "string" && existsSync(path)) return { path };
    return { missing: "the electron package has no binary" };
  } catch (err) {
    return { missing: (err as Error).message.split("\n")[0] ?? "electron failed to load" };
  }
}
