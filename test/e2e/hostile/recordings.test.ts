// Hostile recordings (issue 28, "Replay files"): a file's lines and size are the attacker's.
// Each is given to what a user opens it with, in a process of its own: the replay command
// (`semscope replay`) and a replay hub (the app's File → Open Recording…, `web --replay`).
// What a user relies on: the replay opens, says which limit stopped it, in which file and how to
// raise it, replays everything before it, and holds a long recording without holding all of it.
import { spawn, spawnSync } from "node:child_process";
import { createWriteStream, mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { once } from "node:events";
import { createGzip, gzipSync } from "node:zlib";
import { io, type Socket } from "socket.io-client";
import { afterEach, describe, expect, it } from "vitest";
import { createReplayHub } from "../../../main/hub/recording/replay-hub.js";
import type { ReplayStatus } from "../../../shared/ui-protocol/index.js";
import { T0 } from "../../fixtures/protocol.js";
import { recordingLines, recordingSecond } from "../../fixtures/recording.js";
import { ROOT } from "../browser.js";
import { cleanupAll, onCleanup, request, type AckAnswer } from "../../main/hub/helpers.js";

afterEach(cleanupAll);

const MiB = 1024 * 1024;
const dir = () => mkdtempSync(join(tmpdir(), "semscope-hostile-rec-"));

/** `semscope replay <args>` as a user runs it. */
function replayCli(args: string[]) {
  return spawnSync(process.execPath, ["--import", "tsx", "scripts/semscope.ts", "replay", ...args], { cwd: ROOT, encoding: "utf8", timeout: 120_000 });
}

interface OpenedReplay {
  url: string;
  status: ReplayStatus;
  heldBytes: number;
}

/** A replay hub in a child process over `file`; resolves once it listens. */
async function replayHubChild(file: string, webFlags: string[] = []): Promise<OpenedReplay> {
  const child = spawn(process.execPath, ["--expose-gc", "--import", "tsx", join(import.meta.dirname, "fixtures/replay-hub.ts"), file, ...webFlags], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  onCleanup(async () => {
    if (child.exitCode === null) {
      child.kill("SIGKILL");
      await once(child, "exit");
    }
  });
  let out = "";
  let err = "";
  child.stderr.on("data", (c: Buffer) => (err += c.toString()));
  return new Promise((resolve, reject) => {
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line !== undefined && out.includes("\n")) resolve(JSON.parse(line) as OpenedReplay);
    });
    child.once("exit", (code) => reject(new Error(`the replay hub exited (${String(code)}) before listening: ${err}`)));
  });
}

/** A `/replay` connection (the dashboard's replay bar), once connected. */
function replayControl(url: string): Promise<Socket> {
  const socket = io(`${url}/replay`, { forceNew: true, reconnection: false, transports: ["websocket"], auth: { protocol: 1 } });
  onCleanup(() => socket.disconnect());
  return new Promise((resolve, reject) => {
    socket.once("connect", () => resolve(socket));
    socket.once("connect_error", reject);
  });
}

/** A gzip recording of `lines`, then `fill` written `times` over (never held whole). */
async function writeGzip(file: string, lines: string[], fill: (i: number) => string = () => "", times = 0): Promise<void> {
  const gz = createGzip({ level: 9 });
  const out = gz.pipe(createWriteStream(file));
  gz.write(`${lines.join("\n")}\n`);
  for (let i = 0; i < times; i++) if (!gz.write(fill(i))) await once(gz, "drain");
  gz.end();
  await once(out, "close");
}

/** 20 s of a convoy run, a 16 MB line, 20 s more: 16 KB of gzip. */
function longLineFile(): { file: string; before: number } {
  const head = recordingLines(20);
  const pad = "x".repeat(16 * MiB);
  const long = `{"r":${T0 + 20_500},"k":"samples","a":"a1","p":{"seq":100,"t":${T0 + 20_500},"intervalMs":1000,"items":[],"pad":"${pad}"}}`;
  const tail: string[] = [];
  for (let s = 21; s <= 40; s++) tail.push(...recordingSecond(s));
  const file = join(dir(), "long-line.ndjson.gz");
  writeFileSync(file, gzipSync(`${[...head, long, ...tail].join("\n")}\n`, { level: 9 }));
  expect(statSync(file).size).toBeLessThan(64 * 1024);
  return { file, before: head.length };
}

describe("hostile recordings", () => {
  it("a 16 MB line in a 16 KB gzip: `semscope replay` stops at the line limit, naming it, the file and the option, after replaying all before it", () => {
    const { file, before } = longLineFile();
    const run = replayCli([file]);
    expect(run.status, run.stderr).toBe(0);
    // The convoy raised before the line is there.
    expect(run.stdout).toMatch(/ convoy +checkout\/web-1\/db /);
    expect(run.stdout).toContain(`replayed ${before} lines`);
    expect(run.stderr).toMatch(new RegExp(`stopped at line ${before + 1}: a line of ${basename(file).replace(/\./g, "\\.")} is longer than the 12 MiB line limit \\(raise it with --max-line-mb\\)`));

    // Raised, the line is read (its payload is a valid batch) and the rest replays.
    const raised = replayCli([file, "--max-line-mb", "32"]);
    expect(raised.status, raised.stderr).toBe(0);
    expect(raised.stdout).toContain(`replayed ${before + 1 + 40} lines`);
    expect(raised.stderr).toBe("");
  }, 120_000);

  it("the same file: a replay hub opens it, with what came before on its timeline and a message naming the limit and the file", async () => {
    const { file, before } = longLineFile();
    const { status } = await replayHubChild(file);
    expect(status.lines).toBe(before);
    expect(status.marks.map((m) => m.rule)).toEqual(["convoy"]);
    expect(status.message).toContain(`stopped at line ${before + 1}`);
    expect(status.message).toContain(`a line of ${basename(file)} is longer than the 12 MiB line limit`);
    expect(status.message).toContain("everything before it was loaded");
  }, 120_000);

  it("a recording expanding past the text limit: `semscope replay` stops at it, naming it, the file and the option, after replaying all before it", async () => {
    const file = join(dir(), "big.ndjson.gz");
    // ~24 MB of text: a convoy in the first 20 s, then hours of quiet samples.
    await writeGzip(file, recordingLines(20), (i) => `${recordingSecond(21 + i).join("\n")}\n`, 20_000);
    const run = replayCli([file, "--max-text-mb", "8"]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/ convoy +checkout\/web-1\/db /);
    const replayed = Number(/replayed (\d+) lines/.exec(run.stdout)?.[1]);
    expect(replayed).toBeGreaterThan(1000);
    expect(run.stderr).toContain(`stopped at line ${replayed + 1}: ${basename(file)} is more than the 8 MiB of text a replay reads (raise it with --max-text-mb)`);
    // Below the limit, the whole file replays.
    const whole = replayCli([file, "--max-text-mb", "64"]);
    expect(whole.stdout).toContain(`replayed ${recordingLines(20).length + 40_000} lines`);
    expect(whole.stderr).toBe("");
    // Web mode's replay hub takes the same option, and its message names it.
    const capped = await replayHubChild(file, ["--max-text-mb", "8"]);
    expect(capped.status.lines).toBe(replayed);
    expect(capped.status.message).toContain(`${basename(file)} is more than the 8 MiB of text a replay reads (raise it with --max-text-mb)`);
    const raised = await replayHubChild(file, ["--max-text-mb", "64"]);
    expect(raised.status.message).toBeUndefined();
    expect(raised.status.lines).toBe(recordingLines(20).length + 40_000);
  }, 120_000);

  it("a 1.6 MB gzip expanding to ~90 MB of lines: a replay hub opens all of it, holding a small part of it", async () => {
    const file = join(dir(), "bomb.ndjson.gz");
    const seconds = 110_000;
    await writeGzip(file, recordingLines(20), (i) => `${recordingSecond(21 + i).join("\n")}\n`, seconds);
    const { status, heldBytes } = await replayHubChild(file);
    expect(status.message).toBeUndefined();
    expect(status.lines).toBe(recordingLines(20).length + 2 * seconds);
    expect(status.marks.map((m) => m.rule)).toEqual(["convoy"]);
    expect(statSync(file).size).toBeLessThan(4 * MiB);
    // The whole process after a full GC, heap and buffers (the lines parsed would be ~220 MB).
    expect(heldBytes).toBeLessThan(64 * MiB);
  }, 180_000);

  it("`replay:save` writes at most 20 ranges per replay; the 21st is refused, naming the limit, and writes nothing", async () => {
    const file = join(dir(), "run.ndjson");
    writeFileSync(file, `${recordingLines(30).join("\n")}\n`);
    const saveDir = dir();
    const hub = await createReplayHub({ file, port: 0, log: () => undefined, saveDir });
    onCleanup(() => hub.close());
    const socket = await replayControl(hub.url);
    const saves = await Promise.all(Array.from({ length: 21 }, (_, i) => request<AckAnswer>(socket, "replay:save", { name: `range ${i}`, from: T0 + 5000, to: T0 + 15_000 })));
    expect(saves.filter((s) => s.ok).length).toBe(20);
    expect(saves.filter((s) => !s.ok).map((s) => s.error)).toEqual(["this replay has saved 20 ranges, its limit: open the recording again to save more"]);
    expect(readdirSync(saveDir).length).toBe(20);
    // A new connection does not reset it.
    const again = await replayControl(hub.url);
    expect((await request<AckAnswer>(again, "replay:save", { name: "one more", from: T0, to: T0 + 1000 })).ok).toBe(false);
    expect(readdirSync(saveDir).length).toBe(20);
  }, 60_000);
});
