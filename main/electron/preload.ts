// The dashboard's only door to main: a few named functions on `window.semscope`. Bundled to one
// CommonJS file (sandboxed preloads cannot load ES modules or our other files). It never hands
// the page ipcRenderer, an IPC event, or a way to pick the channel.
import { contextBridge, ipcRenderer, type IpcRendererEvent } from "electron";
import {
  BRIDGE_KEY,
  type EventChannel,
  type InvokeChannel,
  type IpcEventMap,
  type IpcInvokeMap,
  type SemscopeBridge,
} from "../../shared/ipc/ipc-contract.js";

function invoke<C extends InvokeChannel>(channel: C, ...args: IpcInvokeMap[C]["args"]): Promise<IpcInvokeMap[C]["result"]> {
  return ipcRenderer.invoke(channel, ...args) as Promise<IpcInvokeMap[C]["result"]>;
}

function subscribe<C extends EventChannel>(channel: C, listener: (payload: IpcEventMap[C]) => void): () => void {
  if (typeof listener !== "function") throw new TypeError(`${channel}: the listener must be a function`);
  // The event stays here: event.sender would give the page ipcRenderer itself.
  const wrapped = (_event: IpcRendererEvent, payload: IpcEventMap[C]) => listener(payload);
  ipcRenderer.on(channel, wrapped);
  return () => {
    ipcRenderer.removeListener(channel, wrapped);
  };
}

const bridge: SemscopeBridge = {
  bridgeVersion: 1,
  getSettings: () => invoke("settings:get"),
  saveSettings: (settings) => invoke("settings:save", settings),
  getConnection: () => invoke("connection:get"),
  regenerateHubToken: () => invoke("token:regenerate"),
  onFocusSemaphore: (listener) => subscribe("semaphore:focus", listener),
  onShowSettings: (listener) => subscribe("settings:show", () => listener()),
};

contextBridge.exposeInMainWorld(BRIDGE_KEY, bridge);
