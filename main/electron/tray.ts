// The tray icon: its light shows the worst active alert, its title (macOS) and tooltip the count.
import { app, nativeImage, Tray } from "electron";
import { trayIconPng } from "../app/icon-art.js";
import type { MenuAction, MenuItemData } from "../app/menu-template.js";
import type { TrayLevel, TrayState } from "../app/tray-state.js";
import { buildMenu } from "./menu.js";

export class AppTray {
  private tray: Tray | null = null;
  private level: TrayLevel | null = null;

  constructor(private readonly onAction: (action: MenuAction) => void) {}

  update(state: TrayState, menu: MenuItemData[]): void {
    const image = this.level === state.level ? null : nativeImage.createFromBuffer(trayIconPng(state.level, 32)).resize({ width: 22, height: 22 });
    if (this.tray === null) {
      this.tray = new Tray(image ?? nativeImage.createEmpty());
      this.tray.on("click", () => this.onAction({ type: "show-window" }));
    } else if (image !== null) {
      this.tray.setImage(image);
    }
    this.level = state.level;
    this.tray.setToolTip(state.tooltip);
    if (process.platform === "darwin") this.tray.setTitle(state.title);
    this.tray.setContextMenu(buildMenu(menu, this.onAction));
    // Dock / launcher badge where the platform has one (macOS, Unity launchers); a no-op elsewhere.
    app.setBadgeCount(state.count);
  }

  destroy(): void {
    this.tray?.destroy();
    this.tray = null;
  }
}
