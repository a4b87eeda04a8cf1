// `replay:save` (the replay bar's Save range, in web mode's --replay and the app's replay window)
// writes where other users of the machine cannot read, and never through a link someone planted
// at the name it was given.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createReplayHub } from "../../../../main/hub/recording/replay-hub.js";
import { recordingLines } from "../../../fixtures/recording.js";
import { cleanupAll, client, onCleanup, request, T0, type AckAnswer } from "../helpers.js";

afterEach(cleanupAll);

const tmp = () => mkdtempSync(join(tmpdir(), "semscope-replay-save-"));

/** A replay hub over 30 s of a recorded run, saving into `saveDir`, and its replay bar's socket. */
async function replayBar(saveDir: string) {
  const file = join(tmp(), "run.ndjson");
  writeFileSync(file, `${recordingLines(30).join("\n")}\n`);
  const hub = await createReplayHub({ file, port: 0, log: () => undefined, saveDir });
  onCleanup(() => hub.close());
  const socket = await client(hub.url, "/replay");
  return (name: string) => request<AckAnswer & { file?: string }>(socket, "replay:save", { name, from: T0 + 5000, to: T0 + 15_000 });
}

describe("replay:save", () => {
  it("writes a range readable by its owner only, in a folder it makes for the owner only", async () => {
    const saveDir = join(tmp(), "saved");
    const save = await replayBar(saveDir);
    const saved = await save("first");
    expect(saved).toMatchObject({ ok: true, file: join(saveDir, "first.ndjson.gz") });
    expect(statSync(saveDir).mode & 0o777).toBe(0o700);
    expect(statSync(saved.file as string).mode & 0o777).toBe(0o600);
  });

  it("refuses a name already taken or a dangling link planted at it, leaving the file as it was and creating nothing through the link", async () => {
    const saveDir = tmp();
    const save = await replayBar(saveDir);
    const first = await save("first");
    expect(first.ok).toBe(true);
    const before = readFileSync(first.file as string);
    const taken = `a recording named "first" already exists in ${saveDir}: choose another name`;
    expect(await save("first")).toEqual({ ok: false, error: taken });
    expect(readFileSync(first.file as string).equals(before)).toBe(true);

    const target = join(tmp(), "elsewhere", "owned.txt");
    mkdirSync(join(target, ".."));
    symlinkSync(target, join(saveDir, "planted.ndjson.gz"));
    expect(await save("planted")).toEqual({ ok: false, error: `a recording named "planted" already exists in ${saveDir}: choose another name` });
    expect(existsSync(target)).toBe(false);
  });

  it("two saves of one new name at once: one writes, the other is refused with the same plain message, never the system's EEXIST", async () => {
    const saveDir = tmp();
    const save = await replayBar(saveDir);
    const answers = await Promise.all([save("twice"), save("twice")]);
    expect(answers.filter((a) => a.ok)).toHaveLength(1);
    expect(answers.find((a) => !a.ok)).toEqual({ ok: false, error: `a recording named "twice" already exists in ${saveDir}: choose another name` });
  });
});
