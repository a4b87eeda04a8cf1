// A recording's name as a file name safe on every OS (saved ranges), and the refusal for a name
// already taken.
import { lstatSync } from "node:fs";

export function safeName(name: string): string {
  const cleaned = name
    .trim()
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/-{2,}/g, "-")
    .replace(/^[.-]+/, "")
    .replace(/-+$/, "")
    .slice(0, 80);
  if (cleaned === "") throw new RangeError("a recording needs a name (letters, digits, . _ and -)");
  return cleaned;
}

/** What a save says when `<dir>/<name>…` is taken (by a recording, or a link planted there: never written through). */
export function nameTakenError(name: string, dir: string): Error {
  return new Error(`a recording named "${name}" already exists in ${dir}: choose another name`);
}

/** `file` exists, a dangling link at its name included (which existsSync, following it, misses). */
export function nameTaken(file: string): boolean {
  try {
    lstatSync(file);
    return true;
  } catch {
    return false;
  }
}

/** The error for a save whose exclusive write failed (`failed` is the writer's message): a taken name said plainly. */
export function saveWriteError(failed: string, name: string, dir: string, file: string): Error {
  return failed.includes("EEXIST") ? nameTakenError(name, dir) : new Error(`cannot write ${file}: ${failed}`);
}
