// What `semscope <command> --help` and `semscope --help` print, read as a user reads them, against
// the flags each command's parser accepts (the option tables the parsers are given): every flag a
// command takes is in its help, and the help names no flag the command would refuse. The docs
// (docs/protocol.md for the commands, README.md for `npm start`) name the same flags.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HUB_OPTIONS } from "../../../main/hub/cli.js";
import { REPLAY_OPTIONS } from "../../../main/hub/replay-cli.js";
import { START_OPTIONS, WEB_OPTIONS } from "../../../scripts/launch-options.js";

const ROOT = join(import.meta.dirname, "..", "..", "..");

type Spec = Record<string, { type: "string" | "boolean"; short?: string }>;

/** `--name` and `-x` as a command line takes them. */
function flagsOf(spec: Spec): string[] {
  return Object.entries(spec).flatMap(([name, o]) => [`--${name}`, ...(o.short === undefined ? [] : [`-${o.short}`])]);
}

const COMMANDS: Record<"hub" | "web" | "replay", string[]> = {
  hub: flagsOf(HUB_OPTIONS),
  web: flagsOf(WEB_OPTIONS),
  replay: flagsOf(REPLAY_OPTIONS),
};

/** Every flag a text names, long or short, once each. */
function flagsIn(text: string): string[] {
  return [...new Set([...text.matchAll(/(?<![\w-])(--[a-z][a-z0-9-]*|-[a-z])(?![\w-])/g)].map((m) => m[1]))].sort();
}

function run(script: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ["--import", "tsx", script, ...args], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const semscope = (args: string[]) => run("scripts/semscope.ts", args);

describe("the semscope command's help", () => {
  for (const [command, accepted] of Object.entries(COMMANDS)) {
    it(`semscope ${command} --help and -h list exactly the flags it accepts`, () => {
      for (const ask of ["--help", "-h"]) {
        const r = semscope([command, ask]);
        expect(r.status, r.stderr).toBe(0);
        expect(r.stdout).toMatch(new RegExp(`^usage: semscope ${command} `));
        expect(flagsIn(r.stdout), `${command} ${ask}`).toEqual([...accepted].sort());
      }
    }, 120_000);
  }

  it("semscope --help lists each command with every flag it accepts (but --help, which its last line names)", () => {
    const r = semscope(["--help"]);
    expect(r.status).toBe(0);
    const [commands, notes] = r.stdout.split(/\n\n(?=SEMSCOPE_TOKEN)/);
    // A command's section: its line `  semscope <command> …` and every line indented under it.
    const sections = new Map<string, string>();
    let current: string | undefined;
    for (const line of commands.split("\n")) {
      const head = /^ {2}semscope (\w+)/.exec(line);
      if (head !== null) current = head[1];
      else if (!line.startsWith("   ")) current = undefined;
      if (current !== undefined) sections.set(current, `${sections.get(current) ?? ""}${line}\n`);
    }
    expect([...sections.keys()].filter((c) => c in COMMANDS).sort()).toEqual(Object.keys(COMMANDS).sort());
    for (const [command, accepted] of Object.entries(COMMANDS)) {
      expect(flagsIn(sections.get(command) ?? ""), command).toEqual(accepted.filter((f) => f !== "--help" && f !== "-h").sort());
    }
    expect(commands).toContain("semscope <command> --help");
    // The notes after the list name flags of the commands above, and nothing else.
    const all = new Set(Object.values(COMMANDS).flat());
    expect(notes).toBeDefined();
    for (const flag of flagsIn(notes)) expect(all, flag).toContain(flag);
  }, 60_000);

  it("web takes every flag of hub but --static (one table): the agent token, the origins, the caps", () => {
    expect(COMMANDS.hub.filter((f) => !COMMANDS.web.includes(f))).toEqual(["--static"]);
  });

  it("refuses a flag its help does not list: npm start's --web is not semscope web's", () => {
    const r = semscope(["web", "--web", "--port", "0"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^semscope web: Unknown option '--web'/);
  }, 60_000);
});

describe("npm start's help", () => {
  it("npm start -- --help and -h list exactly the flags it accepts: web mode's and --web", () => {
    for (const ask of ["--help", "-h"]) {
      const r = run("scripts/start.ts", [ask]);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^usage: npm start -- /);
      expect(flagsIn(r.stdout), ask).toEqual(flagsOf(START_OPTIONS).sort());
    }
  }, 120_000);
});

describe("the docs", () => {
  /**
   * The flags a Markdown file gives our commands: in code (a span, or a line of a fenced block) that
   * runs one (`semscope …`, `npm start …`, `npm run hub|web|replay …`) or is a bare flag (`--port <p>`).
   */
  const inCode = (file: string): string[] => {
    const text = readFileSync(join(ROOT, file), "utf8");
    const fenced = [...text.matchAll(/^```\w*\n([\s\S]*?)^```/gm)].flatMap((m) => m[1].split("\n"));
    const spans = text.replace(/^```\w*\n[\s\S]*?^```/gm, "").match(/`[^`\n]+`/g) ?? [];
    const ours = [...fenced, ...spans].filter((code) => /^`?--|semscope |npm start|npm run (hub|web|replay)/.test(code));
    return flagsIn(ours.join("\n"));
  };

  it("docs/protocol.md names every flag of semscope hub, web and replay, and no other", () => {
    const named = inCode("docs/protocol.md");
    const taken = [...new Set(Object.values(COMMANDS).flat())].filter((f) => f !== "--help" && f !== "-h");
    expect(taken.filter((f) => !named.includes(f))).toEqual([]);
    expect(named.filter((f) => !taken.includes(f))).toEqual([]);
  });

  it("README.md names npm start's own flags, and only flags a command takes", () => {
    const named = inCode("README.md");
    for (const flag of flagsOf(START_OPTIONS).filter((f) => !flagsOf(WEB_OPTIONS).includes(f))) expect(named, flag).toContain(flag);
    const taken = new Set([...Object.values(COMMANDS).flat(), ...flagsOf(START_OPTIONS)]);
    for (const flag of named) expect(taken, flag).toContain(flag);
  });
});
