// The settings file: loaded once and validated (a file that cannot be used is kept aside,
// reported and replaced by defaults: never a crash), written atomically (temp file, fsync,
// rename) so a crash mid-save leaves the old file or the new one, never half of either.
import { randomBytes } from "node:crypto";
import { mkdir, open, readFile, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { Settings } from "../../shared/ipc/ipc-contract.js";
import { defaultSettings, parseSettings, type ParsedSettings } from "./settings-schema.js";

export const SETTINGS_FILE_NAME = "settings.json";

export interface LoadedSettings {
  settings: Settings;
  /** No settings file yet: this run made one, with a new token for the local hub. */
  firstRun?: boolean;
  /** Why the file was not used (null when it loaded, or did not exist yet). */
  problem: string | null;
  /** Where the unusable file was moved, when it could be. */
  backup: string | null;
}

export interface LoadOptions {
  /** For the backup's name; injectable for tests. */
  now?: () => Date;
}

/** Reads and validates `file`; never throws for what is in (or not in) the file. */
export async function loadSettings(file: string, opts: LoadOptions = {}): Promise<LoadedSettings> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if (errCode(err) === "ENOENT") return firstRun(file);
    return replaceUnusable(file, `it could not be read (${errMessage(err)})`, opts);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return replaceUnusable(file, `it is not valid JSON (${errMessage(err)})`, opts);
  }
  const parsed = parseSettings(json);
  if (!parsed.ok) return replaceUnusable(file, `it breaks the settings rules: ${parsed.error}`, opts);
  return { settings: parsed.settings, problem: null, backup: null };
}

/** A token for the local hub: 32 characters of base64url (192 random bits), visible ASCII as the schema asks. */
export function newHubToken(): string {
  return randomBytes(24).toString("base64url");
}

/** The defaults, with a new token: a local hub is never open to every process of the machine unless a user chose so. */
function freshSettings(): Settings {
  const settings = defaultSettings();
  settings.hub.token = newHubToken();
  return settings;
}

/** No file yet: the defaults with a new token, written (0600) so the token stays the same next run. */
async function firstRun(file: string): Promise<LoadedSettings> {
  const settings = freshSettings();
  try {
    await writeSettingsFile(file, settings);
  } catch (err) {
    return { settings, firstRun: true, problem: `The new settings could not be saved to ${file} (${errMessage(err)}); the hub's new token holds for this run only.`, backup: null };
  }
  return { settings, firstRun: true, problem: null, backup: null };
}

async function replaceUnusable(file: string, reason: string, opts: LoadOptions): Promise<LoadedSettings> {
  const settings = freshSettings();
  const stamp = (opts.now?.() ?? new Date()).toISOString().replace(/[:.]/g, "-");
  const backup = `${file}.corrupt-${stamp}`;
  let kept: string | null = backup;
  let tail = `It was kept as ${basename(backup)}.`;
  try {
    await rename(file, backup);
  } catch (err) {
    kept = null;
    tail = `It could not be moved aside (${errMessage(err)}).`;
  }
  try {
    await writeSettingsFile(file, settings);
  } catch (err) {
    tail += ` Writing the defaults failed too (${errMessage(err)}); they are used for this run.`;
  }
  return { settings, problem: `The settings in ${file} could not be used: ${reason}. Defaults are in force, with a new token for the local hub. ${tail}`, backup: kept };
}

/** Writes `settings` to `file` atomically, readable by the user only. */
export async function writeSettingsFile(file: string, settings: Settings): Promise<void> {
  const dir = dirname(file);
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `.${basename(file)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  const handle = await open(tmp, "wx", 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(settings, null, 2)}\n`, "utf8");
    await handle.sync();
  } catch (err) {
    await handle.close();
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await handle.close();
  try {
    await rename(tmp, file);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
}

/** The settings in force, and the one way to change them (validated, then written, then kept). */
export class SettingsStore {
  /** Why the file was replaced at load, or null. */
  readonly problem: string | null;
  private settings: Settings;
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly file: string,
    loaded: LoadedSettings,
  ) {
    this.settings = loaded.settings;
    this.problem = loaded.problem;
  }

  static async open(file: string, opts: LoadOptions = {}): Promise<SettingsStore> {
    return new SettingsStore(file, await loadSettings(file, opts));
  }

  /** A copy: callers cannot change the settings behind the store's back. */
  get current(): Settings {
    return structuredClone(this.settings);
  }

  /**
   * Validates `candidate`, writes it and makes it current. Refused input changes nothing and
   * comes back as `{ ok: false }`; a failed write rejects (and changes nothing either).
   * Saves run one at a time, so the file and `current` always agree.
   */
  save(candidate: unknown): Promise<ParsedSettings> {
    return this.update(() => candidate) as Promise<ParsedSettings>;
  }

  /**
   * Saves what `change` makes of the settings current when its turn comes (after every save before
   * it), or nothing when it returns null (resolves to null then). Validated and written as save() does.
   */
  update(change: (current: Settings) => unknown): Promise<ParsedSettings | null> {
    const run = async (): Promise<ParsedSettings | null> => {
      const candidate = change(structuredClone(this.settings));
      if (candidate === null) return null;
      const parsed = parseSettings(candidate);
      if (!parsed.ok) return parsed;
      await writeSettingsFile(this.file, parsed.settings);
      this.settings = parsed.settings;
      return { ok: true, settings: structuredClone(parsed.settings) };
    };
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }
}

function errCode(err: unknown): string | undefined {
  return typeof err === "object" && err !== null && "code" in err ? String((err as { code: unknown }).code) : undefined;
}

function errMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
