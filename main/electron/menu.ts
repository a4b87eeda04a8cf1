// Menu data (main/app/menu-template.ts) into Electron menus; every click becomes a MenuAction.
import { Menu, type MenuItemConstructorOptions } from "electron";
import type { MenuAction, MenuItemData } from "../app/menu-template.js";

export function toMenuItems(items: readonly MenuItemData[], onAction: (action: MenuAction) => void): MenuItemConstructorOptions[] {
  return items.map((item): MenuItemConstructorOptions => {
    switch (item.kind) {
      case "role":
        return { role: item.role };
      case "separator":
        return { type: "separator" };
      case "label":
        return { label: item.label, enabled: false };
      case "action":
        return {
          label: item.label,
          enabled: item.enabled ?? true,
          ...(item.accelerator !== undefined ? { accelerator: item.accelerator } : {}),
          click: () => onAction(item.action),
        };
      case "radio":
        return { label: item.label, type: "radio", checked: item.checked, click: () => onAction(item.action) };
      case "checkbox":
        return { label: item.label, type: "checkbox", checked: item.checked, enabled: item.enabled, click: () => onAction(item.action) };
      case "submenu":
        return { label: item.label, ...(item.role !== undefined ? { role: item.role } : {}), submenu: toMenuItems(item.items, onAction) };
    }
  });
}

export function buildMenu(items: readonly MenuItemData[], onAction: (action: MenuAction) => void): Menu {
  return Menu.buildFromTemplate(toMenuItems(items, onAction));
}
