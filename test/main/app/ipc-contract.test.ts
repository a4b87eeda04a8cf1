import { describe, expect, it } from "vitest";
import { EVENT_CHANNELS, INVOKE_CHANNELS } from "../../../shared/ipc/ipc-contract.js";
import { checkInvoke, INVOKE_POLICY, isInvokeChannel, senderProblem, type SenderInfo } from "../../../main/app/ipc-contract.js";
import type { TrustedOrigin } from "../../../main/app/navigation-policy.js";
import { defaultSettings } from "../../../main/settings/settings-schema.js";

const local: TrustedOrigin = { origin: "http://127.0.0.1:7420", local: true };
const remote: TrustedOrigin = { origin: "https://hub.example.com", local: false };
const good: SenderInfo = { frameUrl: "http://127.0.0.1:7420/alerts", isMainFrame: true, fromDashboardWindow: true };

describe("IPC contract", () => {
  it("names every channel entity:verb, and main has a policy for each invoke channel", () => {
    for (const c of [...INVOKE_CHANNELS, ...EVENT_CHANNELS]) expect(c).toMatch(/^[a-z]+:[a-z]+$/);
    expect(Object.keys(INVOKE_POLICY).sort()).toEqual([...INVOKE_CHANNELS].sort());
    expect(isInvokeChannel("settings:get")).toBe(true);
    expect(isInvokeChannel("toString")).toBe(false);
    expect(isInvokeChannel("__proto__")).toBe(false);
  });

  it("accepts the dashboard window's main frame on the trusted origin", () => {
    expect(checkInvoke("settings:get", good, local, [])).toEqual({ ok: true, args: [] });
    const s = defaultSettings();
    expect(checkInvoke("settings:save", good, local, [s])).toEqual({ ok: true, args: [s] });
    expect(checkInvoke("connection:get", good, local, [])).toEqual({ ok: true, args: [] });
  });

  it.each<[string, SenderInfo, TrustedOrigin | null, string]>([
    ["no dashboard yet", good, null, "no dashboard is loaded"],
    ["another window", { ...good, fromDashboardWindow: false }, local, "the sender is not the dashboard window"],
    ["a subframe", { ...good, isMainFrame: false }, local, "the sender is a subframe"],
    ["a frame that is gone", { ...good, frameUrl: null }, local, "the sending frame is gone"],
    ["another origin", { ...good, frameUrl: "https://evil.example/" }, local, "the sender's origin https://evil.example is not the dashboard's http://127.0.0.1:7420"],
    ["another port", { ...good, frameUrl: "http://127.0.0.1:7421/" }, local, "is not the dashboard's"],
    ["a file: page", { ...good, frameUrl: "file:///tmp/x.html" }, local, "the sender's origin (none)"],
  ])("refuses %s", (_name, sender, trusted, reason) => {
    expect(senderProblem("settings:get", sender, trusted)).toContain(reason);
    const verdict = checkInvoke("settings:get", sender, trusted, []);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) expect(verdict.reason).toMatch(/^settings:get refused: /);
  });

  it("keeps settings from a remote hub's page, which may only ask for its own connection", () => {
    const fromRemote = { ...good, frameUrl: "https://hub.example.com/" };
    expect(senderProblem("settings:get", fromRemote, remote)).toBe("settings:get is only for the local hub's dashboard");
    expect(senderProblem("settings:save", fromRemote, remote)).toBe("settings:save is only for the local hub's dashboard");
    // A remote page must not turn the local hub's token over either.
    expect(senderProblem("token:regenerate", fromRemote, remote)).toBe("token:regenerate is only for the local hub's dashboard");
    expect(senderProblem("connection:get", fromRemote, remote)).toBeNull();
  });

  it("refuses wrong argument lists", () => {
    expect(checkInvoke("settings:get", good, local, [1])).toMatchObject({ ok: false, reason: expect.stringContaining("bad arguments") });
    expect(checkInvoke("settings:save", good, local, [])).toMatchObject({ ok: false, reason: expect.stringContaining("bad arguments") });
    expect(checkInvoke("settings:save", good, local, [{}, {}])).toMatchObject({ ok: false });
    expect(checkInvoke("connection:get", good, local, ["x"])).toMatchObject({ ok: false });
    // The page cannot choose the new token: main makes it.
    expect(checkInvoke("token:regenerate", good, local, ["mine"])).toMatchObject({ ok: false, reason: expect.stringContaining("bad arguments") });
    expect(checkInvoke("token:regenerate", good, local, [])).toEqual({ ok: true, args: [] });
  });
});
