// A settings file that breaks a rule in some fields keeps every other one: each bad field goes back
// to its default (or, inside a list, its element is left out) and is named for the user, so one
// removed or mistyped setting never costs the token, the remote hubs or the rest.
import type { Settings } from "../../shared/ipc/ipc-contract.js";
import { DEFAULT_SETTINGS, pathText, SETTINGS_VERSION, settingsSchema, thresholdsSchema } from "./settings-schema.js";

export interface RepairedSettings {
  settings: Settings;
  /** Each field left out, for people: `hub.port: must be in 1..65535 (the default, 7420, is used)`. */
  dropped: string[];
  /** The file named a token the rules refused (or none at all, without saying null): the local hub needs a new one. */
  tokenLost: boolean;
}

type Obj = Record<string, unknown>;
type Path = readonly PropertyKey[];

/** Each round fixes every issue zod reports; fixing one can only reveal issues deeper or at the root. */
const MAX_ROUNDS = 20;

const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The settings of `input` that keep to the rules, the others at their defaults; null when nothing
 * can be kept: not an object, or another version's (its fields may mean something else).
 */
export function repairSettings(input: unknown): RepairedSettings | null {
  if (!isObject(input) || (typeof input.version === "number" && input.version !== SETTINGS_VERSION)) return null;
  const work = structuredClone(input);
  const dropped: string[] = [];
  keepGoodThresholds(work, dropped);
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const r = settingsSchema.safeParse(work);
    if (r.success) {
      const hub = input.hub;
      const saidNoToken = isObject(hub) && hub.token === null;
      return { settings: r.data, dropped, tokenLost: r.data.hub.token === null && !saidNoToken };
    }
    const elements = new Map<unknown[], Map<number, string>>();
    for (const issue of r.error.issues) {
      const path = issue.path;
      if (issue.code === "unrecognized_keys") {
        const parent = valueAt(work, path);
        for (const key of issue.keys) {
          if (isObject(parent)) delete parent[key];
          dropped.push(`${pathText([...path, key])}: is not a setting (left out)`);
        }
        continue;
      }
      if (path.length === 0) return null;
      // A bad part of a list element (a remote hub's URL) leaves that element out, not the list.
      const i = path.findIndex((seg) => typeof seg === "number");
      if (i >= 0) {
        const list = valueAt(work, path.slice(0, i));
        if (!Array.isArray(list)) return null;
        const byIndex = elements.get(list) ?? new Map<number, string>();
        elements.set(list, byIndex);
        byIndex.set(path[i] as number, byIndex.get(path[i] as number) ?? `${pathText(path.slice(0, i + 1))}: left out (${pathText(path)}: ${issue.message})`);
        continue;
      }
      const fallback = valueAt(DEFAULT_SETTINGS, path);
      const missing = valueAt(work, path) === undefined;
      setAt(work, path, fallback === undefined ? undefined : structuredClone(fallback));
      const instead = fallback === undefined ? "left out" : isObject(fallback) || Array.isArray(fallback) ? "its defaults are used" : `the default, ${JSON.stringify(fallback)}, is used`;
      dropped.push(`${pathText(path)}: ${missing ? "missing" : issue.message} (${instead})`);
    }
    for (const [list, byIndex] of elements) {
      // Highest index first, so the others keep their places.
      for (const index of [...byIndex.keys()].sort((a, b) => b - a)) {
        list.splice(index, 1);
        dropped.push(byIndex.get(index) as string);
      }
    }
  }
  return null;
}

/** Threshold overrides checked one by one: a bad one goes, the others stay. */
function keepGoodThresholds(work: Obj, dropped: string[]): void {
  const th = work.thresholds;
  if (!isObject(th)) return;
  for (const [group, fields] of Object.entries(th)) {
    if (!isObject(fields)) continue;
    for (const [field, value] of Object.entries(fields)) {
      const r = thresholdsSchema.safeParse({ [group]: { [field]: value } });
      if (r.success) continue;
      delete fields[field];
      const name = `thresholds.${group}.${field}`;
      // applyThresholds' messages name the field themselves.
      const why = (r.error.issues[0]?.message ?? "breaks the rules").replace(`${name}: `, "");
      dropped.push(`${name}: ${why} (left out: its default is used)`);
    }
  }
}

function valueAt(root: unknown, path: Path): unknown {
  let v = root;
  for (const seg of path) {
    if (typeof v !== "object" || v === null) return undefined;
    v = (v as Record<PropertyKey, unknown>)[seg];
  }
  return v;
}

function setAt(root: Obj, path: Path, value: unknown): void {
  const parent = valueAt(root, path.slice(0, -1));
  if (typeof parent !== "object" || parent === null) return;
  const key = path[path.length - 1];
  if (value === undefined) delete (parent as Record<PropertyKey, unknown>)[key];
  else (parent as Record<PropertyKey, unknown>)[key] = value;
}
