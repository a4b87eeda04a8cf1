// The application and tray menus as plain data: items name an action (or an Electron role), and
// main/electron/menu.ts turns them into Electron menus and actions into calls.

/** What clicking an item asks the shell to do. */
export type MenuAction =
  | { type: "show-settings" }
  | { type: "show-window" }
  /** null: the local hub. */
  | { type: "switch-hub"; remoteId: string | null }
  /** Flip settings.runDemo ("Run the demo service"). */
  | { type: "toggle-demo" }
  /** File → Open Recording…: a recording (the app's, or a headless hub's --record) in replay mode. */
  | { type: "open-recording" }
  /** File → Save Recording…: a named copy of a time range of the local hub's recordings. */
  | { type: "save-recording" }
  | { type: "quit" };

/** Electron's built-in menu roles this app uses. */
export type MenuRole =
  | "about"
  | "services"
  | "hide"
  | "hideOthers"
  | "unhide"
  | "quit"
  | "undo"
  | "redo"
  | "cut"
  | "copy"
  | "paste"
  | "selectAll"
  | "reload"
  | "forceReload"
  | "toggleDevTools"
  | "resetZoom"
  | "zoomIn"
  | "zoomOut"
  | "togglefullscreen"
  | "minimize"
  | "zoom"
  | "close"
  | "front";

export type MenuItemData =
  | { kind: "role"; role: MenuRole }
  | { kind: "separator" }
  | { kind: "action"; label: string; action: MenuAction; accelerator?: string; enabled?: boolean }
  | { kind: "radio"; label: string; action: MenuAction; checked: boolean }
  | { kind: "checkbox"; label: string; action: MenuAction; checked: boolean; enabled: boolean }
  | { kind: "label"; label: string }
  | { kind: "submenu"; label: string; role?: "appMenu" | "windowMenu" | "help"; items: MenuItemData[] };

export interface MenuInput {
  platform: string;
  /** Developer tools only in unpackaged (development) runs. */
  isPackaged: boolean;
  remoteHubs: readonly { id: string; name: string }[];
  activeRemoteId: string | null;
  localPort: number;
  /** The built-in demo, when the app has one: whether it is on, and whether it can run (local hub only). */
  demo?: { on: boolean; enabled: boolean };
}

const sep: MenuItemData = { kind: "separator" };
const role = (r: MenuRole): MenuItemData => ({ kind: "role", role: r });

export function applicationMenu(input: MenuInput): MenuItemData[] {
  const mac = input.platform === "darwin";
  const settings = settingsItem(input.activeRemoteId, mac ? "Settings…" : "&Settings…");
  const menu: MenuItemData[] = [];
  if (mac) {
    menu.push({
      kind: "submenu",
      label: "Semscope",
      role: "appMenu",
      items: [role("about"), sep, settings, sep, ...recordingItems(mac), sep, role("services"), sep, role("hide"), role("hideOthers"), role("unhide"), sep, role("quit")],
    });
  } else {
    menu.push({ kind: "submenu", label: "&File", items: [settings, sep, ...recordingItems(mac), sep, role("quit")] });
  }
  menu.push({ kind: "submenu", label: mac ? "Edit" : "&Edit", items: [role("undo"), role("redo"), sep, role("cut"), role("copy"), role("paste"), role("selectAll")] });
  menu.push({ kind: "submenu", label: mac ? "Hub" : "&Hub", items: [...hubItems(input), ...demoItems(input.demo)] });
  const view: MenuItemData[] = [role("reload"), role("forceReload")];
  if (!input.isPackaged) view.push(role("toggleDevTools"));
  view.push(sep, role("resetZoom"), role("zoomIn"), role("zoomOut"), sep, role("togglefullscreen"));
  menu.push({ kind: "submenu", label: mac ? "View" : "&View", items: view });
  menu.push({
    kind: "submenu",
    label: mac ? "Window" : "&Window",
    role: "windowMenu",
    items: mac ? [role("minimize"), role("zoom"), sep, role("front")] : [role("minimize"), role("close")],
  });
  if (!mac) menu.push({ kind: "submenu", label: "&Help", role: "help", items: [role("about")] });
  return menu;
}

/** Recordings (main/app/recordings.ts): macOS has no File menu here, so they sit in the app menu. */
export function recordingItems(mac: boolean): MenuItemData[] {
  return [
    { kind: "action", label: mac ? "Open Recording…" : "&Open Recording…", action: { type: "open-recording" }, accelerator: "CmdOrCtrl+O" },
    { kind: "action", label: mac ? "Save Recording…" : "Save &Recording…", action: { type: "save-recording" } },
  ];
}

/** Settings are edited on the local hub's dashboard only (a remote hub's page gets no settings channel). */
function settingsItem(activeRemoteId: string | null, label: string): MenuItemData {
  const local = activeRemoteId === null;
  return { kind: "action", label: local ? label : `${label} (local hub only)`, action: { type: "show-settings" }, accelerator: "CmdOrCtrl+,", enabled: local };
}

/** One radio item per hub the window can show; choosing one reconnects. */
export function hubItems(input: Pick<MenuInput, "remoteHubs" | "activeRemoteId" | "localPort">): MenuItemData[] {
  const items: MenuItemData[] = [
    { kind: "radio", label: `Local hub (127.0.0.1:${input.localPort})`, action: { type: "switch-hub", remoteId: null }, checked: input.activeRemoteId === null },
  ];
  if (input.remoteHubs.length > 0) items.push(sep);
  for (const hub of input.remoteHubs) {
    items.push({ kind: "radio", label: hub.name, action: { type: "switch-hub", remoteId: hub.id }, checked: input.activeRemoteId === hub.id });
  }
  return items;
}

/** "Run the demo service", a setting kept like the others (it streams to the local hub only). */
export function demoItems(demo: MenuInput["demo"]): MenuItemData[] {
  if (demo === undefined) return [];
  return [sep, { kind: "checkbox", label: "Run the demo service", action: { type: "toggle-demo" }, checked: demo.on, enabled: demo.enabled }];
}

export function trayMenu(summary: string, activeRemoteId: string | null): MenuItemData[] {
  const { accelerator: _accelerator, ...settings } = settingsItem(activeRemoteId, "Settings…") as Extract<MenuItemData, { kind: "action" }>;
  return [
    { kind: "label", label: summary },
    sep,
    { kind: "action", label: "Show Semscope", action: { type: "show-window" } },
    settings,
    sep,
    { kind: "action", label: "Quit Semscope", action: { type: "quit" } },
  ];
}
