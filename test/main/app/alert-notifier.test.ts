import { describe, expect, it } from "vitest";
import type { NotificationPrefs } from "../../../shared/ipc/ipc-contract.js";
import { AlertNotifier, MAX_NOTIFICATIONS_PER_UPDATE, notificationText, passesPrefs, summaryText } from "../../../main/app/alert-notifier.js";
import { makeAlert } from "./make-alert.js";

const prefs: NotificationPrefs = { enabled: true, minSeverity: "critical", mutedRules: [], silent: false };

function primed(): AlertNotifier {
  const n = new AlertNotifier();
  n.update([], prefs);
  return n;
}

describe("passesPrefs", () => {
  it("passes active, unacknowledged alerts at or above the chosen severity and not muted", () => {
    expect(passesPrefs(makeAlert(), prefs)).toBe(true);
    expect(passesPrefs(makeAlert({ severity: "warning" }), prefs)).toBe(false);
    expect(passesPrefs(makeAlert({ severity: "warning" }), { ...prefs, minSeverity: "warning" })).toBe(true);
    expect(passesPrefs(makeAlert(), { ...prefs, enabled: false })).toBe(false);
    expect(passesPrefs(makeAlert(), { ...prefs, mutedRules: ["leak"] })).toBe(false);
    expect(passesPrefs(makeAlert({ acknowledged: true }), prefs)).toBe(false);
    expect(passesPrefs(makeAlert({ resolvedAt: 5 }), prefs)).toBe(false);
  });
});

describe("AlertNotifier", () => {
  it("takes what is active at the first look as the baseline, then notifies each new critical alert once", () => {
    const n = new AlertNotifier();
    const old = makeAlert();
    expect(n.update([old], prefs)).toEqual({ notify: [], more: 0 });
    const fresh = makeAlert({ key: "checkout/web-2/db" });
    expect(n.update([old, fresh], prefs)).toEqual({ notify: [fresh], more: 0 });
    expect(n.update([old, fresh], prefs)).toEqual({ notify: [], more: 0 });
  });

  it("notifies a warning that turns critical while open (same id)", () => {
    const n = primed();
    const convoy = makeAlert({ rule: "convoy", severity: "warning" });
    expect(n.update([convoy], prefs).notify).toEqual([]);
    const worse = { ...convoy, severity: "critical" as const };
    expect(n.update([worse], prefs).notify).toEqual([worse]);
  });

  it("notifies an alert again if it resolves and a new one is raised under a new id", () => {
    const n = primed();
    const a = makeAlert();
    expect(n.update([a], prefs).notify).toHaveLength(1);
    expect(n.update([], prefs).notify).toHaveLength(0);
    const b = makeAlert();
    expect(n.update([b], prefs).notify).toEqual([b]);
  });

  it("folds a burst into a few notifications and one summary, oldest first", () => {
    const n = primed();
    const burst = Array.from({ length: 10 }, (_, i) => makeAlert({ raisedAt: 1000 - i }));
    const plan = n.update(burst, prefs);
    expect(plan.notify).toHaveLength(MAX_NOTIFICATIONS_PER_UPDATE - 1);
    expect(plan.more).toBe(10 - (MAX_NOTIFICATIONS_PER_UPDATE - 1));
    expect(plan.notify.map((a) => a.raisedAt)).toEqual([991, 992]);
    expect(summaryText(plan.more)).toEqual({ title: "8 more alerts", body: "Open Semscope to see them all." });
    expect(summaryText(1).title).toBe("1 more alert");
  });

  it("re-baselines after reset (a new hub)", () => {
    const n = primed();
    n.reset();
    expect(n.update([makeAlert()], prefs).notify).toEqual([]);
  });

  it("follows preference changes: a muted rule is not notified, unmuting notifies it if still new", () => {
    const n = primed();
    const leak = makeAlert();
    expect(n.update([leak], { ...prefs, mutedRules: ["leak"] }).notify).toEqual([]);
    expect(n.update([leak], prefs).notify).toEqual([leak]);
  });
});

describe("notificationText", () => {
  it("says severity, rule and where in the title, the engine's message in the body", () => {
    expect(notificationText(makeAlert({ rule: "double_release", severity: "critical" }), "darwin")).toEqual({
      title: "Critical: double release — db on checkout/web-1",
      body: "db on checkout/web-1: 1 permit held > 10 s and not released",
    });
    const fleet = makeAlert({ rule: "over_budget", severity: "warning", instance: undefined, semaphore: "db", key: "checkout/db" });
    expect(notificationText(fleet, "darwin").title).toBe("Warning: over budget — db on checkout");
    const agent = makeAlert({ rule: "agent_down", severity: "warning", semaphore: undefined, key: "checkout/web-1" });
    expect(notificationText(agent, "darwin").title).toBe("Warning: agent down — checkout/web-1");
  });

  it("escapes an agent-chosen name in the body on Linux, whose notification servers read markup, and only there", () => {
    const hostile = makeAlert({ message: 'db <a href="https://evil.example">click</a> & <b>more</b>' });
    expect(notificationText(hostile, "linux").body).toBe('db &lt;a href="https://evil.example"&gt;click&lt;/a&gt; &amp; &lt;b&gt;more&lt;/b&gt;');
    expect(notificationText(hostile, "win32").body).toBe(hostile.message);
    expect(notificationText(hostile, "darwin").body).toBe(hostile.message);
  });
});
