// The hub's V8 flags (main/hub/node-flags.ts) reach every command that runs a hub: what bench:hub
// measures is the hub as these commands run it.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { HUB_NODE_FLAGS, HUB_RUNTIME_FLAGS } from "../../../main/hub/node-flags.js";

const scripts = (JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { scripts: Record<string, string> }).scripts;

describe("the hub's node flags", () => {
  // A V8 flag this node does not know stops it before the hub starts ("bad option").
  it("are flags this node accepts", () => {
    const run = spawnSync(process.execPath, [...HUB_NODE_FLAGS, "-e", "0"], { encoding: "utf8" });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
  });

  it.each(["hub", "web", "start"])("are passed to node by npm run %s", (name) => {
    const words = scripts[name].split(/\s+/);
    expect(words[0]).toBe("tsx");
    // Before the script's file: after it they would be the script's own arguments.
    const file = words.findIndex((w) => w.endsWith(".ts"));
    for (const flag of HUB_NODE_FLAGS) expect(words.slice(1, file)).toContain(flag);
  });

  // bench:ui serves the dashboard from a hub in its own process: the hub as npm run web runs it.
  it("are passed to node by npm run bench:ui, whose process holds the hub", () => {
    const words = scripts["bench:ui"].split(/\s+/);
    expect(words[0]).toBe("node");
    const file = words.findIndex((w) => w.endsWith(".ts"));
    for (const flag of HUB_NODE_FLAGS) expect(words.slice(1, file)).toContain(flag);
  });

  it("are given to Electron's main process at launch", () => {
    const start = readFileSync(new URL("../../../scripts/start.ts", import.meta.url), "utf8");
    expect(start).toMatch(/--js-flags=\$\{HUB_NODE_FLAGS\.join\(" "\)\}/);
  });

  /** The old-generation limits V8 set in test/fixtures/heap-growth.ts, by the growing factor it printed. */
  function growingFactors(mode: "apply" | "none"): string[] {
    const run = spawnSync(process.execPath, ["--expose-gc", "--trace-gc-verbose", "--import", "tsx", "test/fixtures/heap-growth.ts", mode], { encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    return [...run.stdout.matchAll(/\[HeapController\] Limit: .*\(([\d.]+)\)/g)].map((m) => m[1]);
  }

  // The packaged app starts Electron with no --js-flags; its main process, which holds the hub,
  // sets the flags V8 reads at each GC itself (main/electron/main.ts).
  it("that V8 reads at every GC take effect when a process started without them sets them", () => {
    for (const flag of HUB_RUNTIME_FLAGS) expect(HUB_NODE_FLAGS).toContain(flag);
    const unset = growingFactors("none");
    const set = growingFactors("apply");
    expect(unset.length).toBeGreaterThan(0);
    // Left to itself V8 picks a larger factor for this small, fast-growing heap.
    expect(unset.every((f) => f !== "2.0")).toBe(true);
    expect(set.length).toBeGreaterThan(0);
    expect(set.every((f) => f === "2.0")).toBe(true);
  });

  it("are set by the Electron main process before it does anything else", () => {
    const main = readFileSync(new URL("../../../main/electron/main.ts", import.meta.url), "utf8");
    expect(main).toMatch(/export function main\(\): void \{\n(\s*\/\/.*\n)*\s*applyHubRuntimeFlags\(\);/);
  });
});
