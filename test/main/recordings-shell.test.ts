// The app's recordings end to end without Electron: the local hub records into the user data
// folder by default (createAppRecorder as main/electron wires it), Save Recording… writes a
// named range of it, Open Recording… serves that file in replay mode on a loopback port of its
// own; and web mode's options for the same.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createAppRecorder, listSaved, recordingSettings, recordingsDir } from "../../main/app/recordings.js";
import { RecordingsShell, SAVE_PRESETS } from "../../main/app/recordings-shell.js";
import { listSegments } from "../../main/hub/recording/recording-rolling.js";
import { parseLaunchArgs } from "../../scripts/launch-options.js";
import { agent, cleanupAll, info, onCleanup, request, sample, startHub, T0, type AckAnswer } from "./hub/helpers.js";

afterEach(cleanupAll);

describe("the app's recordings", () => {
  it("records the local hub by default, saves a named range and opens it in replay mode", async () => {
    const userData = mkdtempSync(join(tmpdir(), "semscope-userdata-"));
    let clock = T0;
    const sink = createAppRecorder(userData, recordingSettings(undefined), () => undefined);
    expect(sink).toBeDefined();
    const hub = await startHub({ recordSink: sink, now: () => clock });
    const a = await agent(hub, "a1", [info("db", { cap: 4 })]);
    for (let i = 0; i < 5; i++) {
      clock += 1000;
      expect((await request<AckAnswer>(a, "samples", { seq: i, t: T0 + i * 1000, intervalMs: 1000, items: [sample("db", { cap: 4, inUse: i % 4, available: 4 - (i % 4) })] })).ok).toBe(true);
    }
    await hub.close();
    const segs = listSegments(recordingsDir(userData));
    expect(segs).toHaveLength(1);
    expect(segs[0].bytes).toBeGreaterThan(0);

    const shell = new RecordingsShell({ userData, log: () => undefined, now: () => clock });
    onCleanup(() => shell.closeReplay());
    const everything = SAVE_PRESETS.findIndex((p) => p.label === "Everything kept");
    const { from, to } = shell.presetRange(everything);
    const saved = await shell.save(join(userData, "recordings", "saved", "incident.ndjson.gz"), from, to);
    expect(saved.file).toBe(join(userData, "recordings", "saved", "incident.ndjson.gz"));
    expect(listSaved(userData).map((s) => s.name)).toEqual(["incident.ndjson.gz"]);
    // start, hello, register, 5 samples (and the ticks while the agent was connected).
    expect(saved.lines).toBeGreaterThanOrEqual(8);

    const opened = await shell.open(saved.file);
    expect(opened.message).toBeUndefined();
    expect(opened.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    // No dashboard files in this test: the hub answers, and says what it is.
    const res = await fetch(opened.url);
    expect(res.status).toBe(404);
    expect(await res.text()).toContain("replays a recording");
    // Recording turned off in settings: the hub gets no recorder.
    expect(createAppRecorder(userData, { enabled: false, capBytes: 1 << 30 }, () => undefined)).toBeUndefined();
  });

  it("web mode takes --replay (with --max-line-mb, --max-text-mb), --record-dir and --record-cap-mb, and refuses contradictions", () => {
    expect(parseLaunchArgs(["--replay", "/tmp/x.ndjson.gz"])).toMatchObject({ replay: "/tmp/x.ndjson.gz", recordDir: undefined });
    expect(parseLaunchArgs(["--record-dir", "/tmp/rec", "--record-cap-mb", "64"])).toMatchObject({ recordDir: "/tmp/rec", recordCapBytes: 64 * 1024 * 1024 });
    expect(() => parseLaunchArgs(["--record-cap-mb", "64"])).toThrow(/needs --record-dir/);
    expect(() => parseLaunchArgs(["--record-dir", "/tmp/r", "--record-cap-mb", "0"])).toThrow(/--record-cap-mb must be/);
    expect(() => parseLaunchArgs(["--replay", "/tmp/x", "--record", "/tmp/y"])).toThrow(/records nothing/);
    // A replay's reader limits: raised with --max-line-mb / --max-text-mb, which its refusal names.
    expect(parseLaunchArgs(["--replay", "/tmp/x", "--max-text-mb", "2048", "--max-line-mb", "64"]).replayLimits).toEqual({
      maxLineBytes: 64 * 1024 * 1024,
      maxTextBytes: 2048 * 1024 * 1024,
      raiseWith: { maxLineBytes: "--max-line-mb", maxTextBytes: "--max-text-mb" },
    });
    expect(() => parseLaunchArgs(["--replay", "/tmp/x", "--max-text-mb", "0"])).toThrow(/--max-text-mb must be a positive number of MiB/);
    expect(() => parseLaunchArgs(["--max-text-mb", "2048"])).toThrow(/need --replay/);
  });
});
