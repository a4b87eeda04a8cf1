// The overview's filter box: words that must all match (service, instance, name, id or kind),
// `field:value` to aim at one field, `-word` to exclude, and numeric tests on the live values
// (`util>80`, `waiters>0`, `wait>=100`). Parsed once per keystroke, matched per row.
import type { AlertRule } from "../../../shared/protocol/types.js";
import { RULE_LABEL } from "./alert-target.js";
import { ruleMatches } from "./row-alerts.js";
import { STATUS_ORDER, type DisplayStatus } from "./status.js";

export interface Filterable {
  service: string;
  instance: string;
  name: string;
  id: string;
  kind: string;
  status: DisplayStatus;
  /** 0..1+ */
  util: number;
  waiters: number;
  /** Wait p99 of the latest interval, ms. */
  waitP99: number;
}

type TextField = "service" | "instance" | "name" | "kind" | "status" | "any";
type NumField = "util" | "waiters" | "wait";
type Op = ">" | ">=" | "<" | "<=" | "=";

interface TextTerm {
  type: "text";
  field: TextField;
  value: string;
  negate: boolean;
}
interface NumTerm {
  type: "num";
  field: NumField;
  op: Op;
  value: number;
  negate: boolean;
}
export type FilterTerm = TextTerm | NumTerm;

export interface ParsedFilter {
  terms: FilterTerm[];
  /** Words the parser did not understand as field tests are plain text terms; nothing is an error. */
  empty: boolean;
  /** `is:` words naming no status, no rule and not "problem": they match nothing, and the box says so. */
  unknown: string[];
}

/** Whether `is:<value>` names something a row can be. */
function knownStatus(value: string): boolean {
  return value === "problem" || STATUS_ORDER.some((s) => s.startsWith(value)) || (Object.keys(RULE_LABEL) as AlertRule[]).some((r) => ruleMatches(r, value));
}

const FIELD_ALIASES: Record<string, TextField> = {
  service: "service",
  svc: "service",
  instance: "instance",
  inst: "instance",
  name: "name",
  kind: "kind",
  status: "status",
  is: "status",
};

const NUM_RE = /^(util|waiters|wait)(>=|<=|>|<|=)(\d+(?:\.\d+)?)$/;

export function parseFilter(query: string): ParsedFilter {
  const terms: FilterTerm[] = [];
  const unknown: string[] = [];
  for (let word of query.trim().toLowerCase().split(/\s+/)) {
    if (word === "") continue;
    let negate = false;
    if (word.startsWith("-") && word.length > 1) {
      negate = true;
      word = word.slice(1);
    }
    const num = NUM_RE.exec(word);
    if (num !== null) {
      // util is typed in percent, like the table shows it.
      const value = num[1] === "util" ? Number(num[3]) / 100 : Number(num[3]);
      terms.push({ type: "num", field: num[1] as NumField, op: num[2] as Op, value, negate });
      continue;
    }
    const colon = word.indexOf(":");
    if (colon > 0) {
      const field = FIELD_ALIASES[word.slice(0, colon)];
      const value = word.slice(colon + 1);
      if (field !== undefined && value !== "") {
        if (field === "status" && !knownStatus(value)) unknown.push(word);
        terms.push({ type: "text", field, value, negate });
        continue;
      }
    }
    terms.push({ type: "text", field: "any", value: word, negate });
  }
  return { terms, empty: terms.length === 0, unknown };
}

function compare(a: number, op: Op, b: number): boolean {
  switch (op) {
    case ">":
      return a > b;
    case ">=":
      return a >= b;
    case "<":
      return a < b;
    case "<=":
      return a <= b;
    case "=":
      return Math.abs(a - b) < 1e-9;
  }
}

/** A row's active alert rules, for `is:<rule>` (and `is:problem`, which an alert makes). */
export type RulesOf<T extends Filterable = Filterable> = (item: T) => readonly AlertRule[] | undefined;

function textMatch<T extends Filterable>(item: T, field: TextField, value: string, rulesOf?: RulesOf<T>): boolean {
  switch (field) {
    case "status": {
      const rules = rulesOf?.(item);
      // "is:problem" is everything not ok, or with an alert firing.
      if (value === "problem") return item.status !== "ok" || (rules !== undefined && rules.length > 0);
      return item.status.startsWith(value) || (rules?.some((r) => ruleMatches(r, value)) ?? false);
    }
    case "any":
      return (
        item.name.toLowerCase().includes(value) ||
        item.service.toLowerCase().includes(value) ||
        item.instance.toLowerCase().includes(value) ||
        item.id.toLowerCase().includes(value) ||
        item.kind.toLowerCase().includes(value)
      );
    default:
      return item[field].toLowerCase().includes(value);
  }
}

export function matchesFilter<T extends Filterable>(item: T, filter: ParsedFilter, rulesOf?: RulesOf<T>): boolean {
  for (const term of filter.terms) {
    let hit: boolean;
    if (term.type === "num") {
      const v = term.field === "util" ? item.util : term.field === "waiters" ? item.waiters : item.waitP99;
      hit = compare(v, term.op, term.value);
    } else {
      hit = textMatch(item, term.field, term.value, rulesOf);
    }
    if (hit === term.negate) return false;
  }
  return true;
}

/** Status chips above the list: a status set, applied on top of the text filter. */
export type StatusChip = "all" | "problems" | DisplayStatus;

/** `alerting`: a rule fires on the row (it is a problem whatever its status says). */
export function matchesChip(status: DisplayStatus, chip: StatusChip, alerting = false): boolean {
  if (chip === "all") return true;
  if (chip === "problems") return status !== "ok" || alerting;
  return status === chip;
}

/** A filter on status (`is:`) changes with the alerts. */
export function filterReadsStatus(f: ParsedFilter): boolean {
  return f.terms.some((t) => t.type === "text" && t.field === "status");
}

/** A filter on live numbers (util>80) can change which rows show with every delta. */
export function filterIsLive(f: ParsedFilter): boolean {
  return f.terms.some((t) => t.type === "num");
}
