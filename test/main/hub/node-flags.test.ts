// The hub's V8 flags (main/hub/node-flags.ts) reach every command that runs a hub: what bench:hub
// measures is the hub as these commands run it.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { HUB_NODE_FLAGS } from "../../../main/hub/node-flags.js";

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
});
