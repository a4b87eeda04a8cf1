// The settings file: loaded once and validated (bad fields are left out and named, every other
// kept; a file that cannot be used at all is kept aside, reported and replaced by defaults: never
// a crash), written atomically (temp file, fsync, rename) so a crash mid-save leaves the old file
// or the new one, never half of either.
import { randomBytes } from "node:crypto";
import { mkdir, open, readFile, rename, unlink, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { Settings } from "../../shared/ipc/ipc-contract.js";
import { repairSettings } from "./settings-repair.js";
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
  /** The fields left out of a file otherwise kept (problem says which); the file on disk still has them. */
  dropped?: string[];
  /** The file on disk is the user's, with fields left out: copy it aside before the first save overwrites it. */
  keepOriginal?: boolean;
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
  if (parsed.ok) return { settings: parsed.settings, problem: null, backup: null };
  const repaired = repairSettings(json);
  if (repaired === null) return replaceUnusable(file, `it breaks the settings rules: ${parsed.error}`, opts);
  return keepRepaired(file, repaired.settings, repaired.dropped, repaired.tokenLost, opts);
}

/**
 * Runs on what the file holds that keeps to the rules. The file is left as the user wrote it (they
 * may be editing it) until a setting changes, then copied aside first; only a lost token needs a
 * write now, so that agents given the new one still get in next run.
 */
async function keepRepaired(file: string, settings: Settings, dropped: string[], tokenLost: boolean, opts: LoadOptions): Promise<LoadedSettings> {
  let problem = `Some settings in ${file} break the rules and are left out: ${dropped.join("; ")}. Every other setting is in force.`;
  if (!tokenLost) {
    return { settings, problem: `${problem} The file is left as it is until you change a setting; it is copied aside then.`, backup: null, dropped, keepOriginal: true };
  }
  settings.hub.token = newHubToken();
  problem += " The local hub has a new token (Settings shows it).";
  const backup = await copyAside(file, opts).catch((err: unknown) => {
    problem += ` The file could not be copied aside (${errMessage(err)}), so it is left as it is: the new token holds for this run only.`;
    return null;
  });
  if (backup === null) return { settings, problem, backup: null, dropped, keepOriginal: true };
  try {
    await writeSettingsFile(file, settings);
    problem += ` The file was rewritten with it; what it held is kept as ${basename(backup)}.`;
  } catch (err) {
    problem += ` Saving it failed (${errMessage(err)}): the new token holds for this run only.`;
  }
  return { settings, problem, backup, dropped };
}

/** A copy of `file` beside it, readable by the user only, never over another file. */
async function copyAside(file: string, opts: LoadOptions): Promise<string> {
  const backup = `${file}.before-${stamp(opts)}`;
  await writeFile(backup, await readFile(file), { mode: 0o600, flag: "wx" });
  return backup;
}

function stamp(opts: LoadOptions): string {
  return (opts.now?.() ?? new Date()).toISOString().replace(/[:.]/g, "-");
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
  const backup = `${file}.corrupt-${stamp(opts)}`;
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
  /** Why the file was replaced, or fields of it left out, at load; null when it loaded cleanly. */
  readonly problem: string | null;
  /** The whole file was replaced by defaults (not just some fields left out). */
  readonly reset: boolean;
  private settings: Settings;
  private queue: Promise<unknown> = Promise.resolve();
  /** The user's file, with fields this run left out, is copied aside before the first save. */
  private keepOriginal: boolean;

  private constructor(
    readonly file: string,
    loaded: LoadedSettings,
    private readonly opts: LoadOptions,
  ) {
    this.settings = loaded.settings;
    this.problem = loaded.problem;
    this.reset = loaded.problem !== null && loaded.dropped === undefined;
    this.keepOriginal = loaded.keepOriginal === true;
  }

  static async open(file: string, opts: LoadOptions = {}): Promise<SettingsStore> {
    return new SettingsStore(file, await loadSettings(file, opts), opts);
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
    return this.enqueue(() => ({ candidate })) as Promise<ParsedSettings>;
  }

  /**
   * Saves what `change` makes of the settings current when its turn comes (after every save before
   * it), or nothing when it returns null (resolves to null then). Validated and written as save() does.
   */
  update(change: (current: Settings) => Settings | null): Promise<ParsedSettings | null> {
    return this.enqueue((current) => {
      const candidate = change(current);
      return candidate === null ? null : { candidate };
    });
  }

  private enqueue(change: (current: Settings) => { candidate: unknown } | null): Promise<ParsedSettings | null> {
    const run = async (): Promise<ParsedSettings | null> => {
      const next = change(structuredClone(this.settings));
      if (next === null) return null;
      const parsed = parseSettings(next.candidate);
      if (!parsed.ok) return parsed;
      if (this.keepOriginal) {
        // What it held beyond the rules stays readable; a file gone meanwhile needs no copy.
        await copyAside(this.file, this.opts).catch((err: unknown) => {
          if (errCode(err) !== "ENOENT") throw err;
        });
        this.keepOriginal = false;
      }
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
