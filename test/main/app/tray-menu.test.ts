import { describe, expect, it } from "vitest";
import { applicationMenu, hubItems, trayMenu, type MenuItemData } from "../../../main/app/menu-template.js";
import { trayState } from "../../../main/app/tray-state.js";
import { makeAlert } from "./make-alert.js";

describe("trayState", () => {
  it("shows nothing to worry about when there are no alerts", () => {
    expect(trayState({ alerts: [], hubName: "Local hub" })).toEqual({
      count: 0,
      critical: 0,
      level: "ok",
      title: "",
      tooltip: "Semscope — Local hub: no active alerts",
      summary: "No active alerts",
    });
  });

  it("counts active alerts, and the critical ones, for title, tooltip and level", () => {
    const alerts = [makeAlert(), makeAlert({ severity: "warning" }), makeAlert({ severity: "warning" }), makeAlert({ resolvedAt: 1 })];
    expect(trayState({ alerts, hubName: "Production" })).toEqual({
      count: 3,
      critical: 1,
      level: "critical",
      title: "3",
      tooltip: "Semscope — Production: 3 active alerts (1 critical)",
      summary: "3 active alerts (1 critical)",
    });
    expect(trayState({ alerts: [makeAlert({ severity: "warning" })], hubName: "x" })).toMatchObject({ level: "warning", summary: "1 active alert" });
  });

  it("says so when the hub cannot be read", () => {
    expect(trayState({ alerts: null, hubName: "Production" })).toMatchObject({ level: "offline", title: "!", tooltip: "Semscope — Production unreachable" });
  });
});

function labels(items: MenuItemData[]): string[] {
  return items.map((i) => ("label" in i ? i.label : i.kind === "role" ? `<${i.role}>` : "---"));
}

describe("menus", () => {
  const base = { isPackaged: true, remoteHubs: [{ id: "prod", name: "Production" }], activeRemoteId: null, localPort: 7420 };

  it("builds the macOS menu with the app menu first and no File menu", () => {
    const menu = applicationMenu({ ...base, platform: "darwin" });
    expect(labels(menu)).toEqual(["Semscope", "Edit", "Hub", "View", "Window"]);
    const app = menu[0] as Extract<MenuItemData, { kind: "submenu" }>;
    expect(app.role).toBe("appMenu");
    expect(app.items).toContainEqual({ kind: "action", label: "Settings…", action: { type: "show-settings" }, accelerator: "CmdOrCtrl+,", enabled: true });
  });

  it("builds the Linux/Windows menu with File and Help, and devtools only unpackaged", () => {
    const packaged = applicationMenu({ ...base, platform: "linux" });
    expect(labels(packaged)).toEqual(["&File", "&Edit", "&Hub", "&View", "&Window", "&Help"]);
    const view = (m: MenuItemData[]) => (m[3] as Extract<MenuItemData, { kind: "submenu" }>).items;
    expect(view(packaged)).not.toContainEqual({ kind: "role", role: "toggleDevTools" });
    expect(view(applicationMenu({ ...base, platform: "linux", isPackaged: false }))).toContainEqual({ kind: "role", role: "toggleDevTools" });
  });

  it("lists the local hub and each remote as radio items, the active one checked", () => {
    expect(hubItems({ ...base, activeRemoteId: "prod" })).toEqual([
      { kind: "radio", label: "Local hub (127.0.0.1:7420)", action: { type: "switch-hub", remoteId: null }, checked: false },
      { kind: "separator" },
      { kind: "radio", label: "Production", action: { type: "switch-hub", remoteId: "prod" }, checked: true },
    ]);
    expect(hubItems({ remoteHubs: [], activeRemoteId: null, localPort: 9000 })).toEqual([
      { kind: "radio", label: "Local hub (127.0.0.1:9000)", action: { type: "switch-hub", remoteId: null }, checked: true },
    ]);
  });

  it("offers 'Run the demo service' in the Hub menu when the app has a demo, checked as the setting says", () => {
    const hub = (m: MenuItemData[]) => (m[2] as Extract<MenuItemData, { kind: "submenu" }>).items;
    expect(hub(applicationMenu({ ...base, platform: "linux" })).some((i) => i.kind === "checkbox")).toBe(false);
    expect(hub(applicationMenu({ ...base, platform: "linux", demo: { on: true, enabled: true } })).at(-1)).toEqual({
      kind: "checkbox",
      label: "Run the demo service",
      action: { type: "toggle-demo" },
      checked: true,
      enabled: true,
    });
    expect(hub(applicationMenu({ ...base, platform: "darwin", demo: { on: false, enabled: false } })).at(-1)).toMatchObject({ checked: false, enabled: false });
  });

  it("disables Settings while a remote hub is shown (its page gets no settings channel)", () => {
    const menu = applicationMenu({ ...base, platform: "linux", activeRemoteId: "prod" });
    const file = (menu[0] as Extract<MenuItemData, { kind: "submenu" }>).items;
    expect(file[0]).toMatchObject({ label: "&Settings… (local hub only)", enabled: false });
    expect(trayMenu("x", "prod")[3]).toMatchObject({ label: "Settings… (local hub only)", enabled: false });
  });

  it("builds the tray menu: summary, show, settings, quit", () => {
    expect(trayMenu("2 active alerts", null)).toEqual([
      { kind: "label", label: "2 active alerts" },
      { kind: "separator" },
      { kind: "action", label: "Show Semscope", action: { type: "show-window" } },
      { kind: "action", label: "Settings…", action: { type: "show-settings" }, enabled: true },
      { kind: "separator" },
      { kind: "action", label: "Quit Semscope", action: { type: "quit" } },
    ]);
  });
});
