// Main's IPC endpoint: one ipcMain.handle per channel of the contract, each call checked (channel,
// sender window, main frame, origin, local-only channels, arguments by zod) by main/app/ipc-contract.ts
// before its handler runs. A refused call rejects in the page and is logged here.
import { ipcMain, type IpcMainInvokeEvent, type WebContents } from "electron";
import { INVOKE_CHANNELS, type EventChannel, type InvokeChannel, type IpcEventMap, type IpcInvokeMap } from "../../shared/ipc/ipc-contract.js";
import { checkInvoke, type SenderInfo } from "../app/ipc-contract.js";
import type { TrustedOrigin } from "../app/navigation-policy.js";

export type IpcHandlers = {
  [C in InvokeChannel]: (...args: IpcInvokeMap[C]["args"]) => IpcInvokeMap[C]["result"] | Promise<IpcInvokeMap[C]["result"]>;
};

export interface IpcOptions {
  handlers: IpcHandlers;
  /** The dashboard window's webContents (null while there is none). */
  getDashboard: () => WebContents | null;
  getTrusted: () => TrustedOrigin | null;
  log?: (line: string) => void;
}

export function senderInfo(event: IpcMainInvokeEvent, dashboard: WebContents | null): SenderInfo {
  const frame = event.senderFrame;
  return {
    frameUrl: frame?.url ?? null,
    isMainFrame: frame !== null && frame.parent === null,
    fromDashboardWindow: dashboard !== null && event.sender === dashboard,
  };
}

/** Registers every channel; returns a function that removes them. */
export function registerIpc(opts: IpcOptions): () => void {
  const log = opts.log ?? (() => undefined);
  for (const channel of INVOKE_CHANNELS) {
    ipcMain.handle(channel, async (event, ...args: unknown[]) => {
      const verdict = checkInvoke(channel, senderInfo(event, opts.getDashboard()), opts.getTrusted(), args);
      if (!verdict.ok) {
        log(`semscope: ${verdict.reason}`);
        throw new Error(verdict.reason);
      }
      const handler = opts.handlers[channel] as (...a: unknown[]) => unknown;
      return handler(...verdict.args);
    });
  }
  return () => {
    for (const channel of INVOKE_CHANNELS) ipcMain.removeHandler(channel);
  };
}

/** Main → dashboard, typed by the contract. */
export function sendToDashboard<C extends EventChannel>(contents: WebContents | null, channel: C, payload: IpcEventMap[C]): void {
  if (contents === null || contents.isDestroyed()) return;
  contents.send(channel, payload);
}
