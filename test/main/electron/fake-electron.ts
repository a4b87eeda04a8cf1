// A stand-in for the `electron` module (the binary cannot run here): just enough of app,
// BrowserWindow, webContents, session, ipcMain, ipcRenderer, contextBridge, Menu, Tray,
// Notification, nativeImage, dialog and utilityProcess to drive main/electron/ and record what it
// asked for.
// Tests use it with: vi.mock("electron", () => import("./fake-electron.js")).
import { spawn } from "node:child_process";
import { EventEmitter } from "node:events";

type Listener = (...args: never[]) => unknown;

export class FakeEvent {
  defaultPrevented = false;
  constructor(readonly url = "") {}
  preventDefault(): void {
    this.defaultPrevented = true;
  }
}

export class FakeWebContents extends EventEmitter {
  static all: FakeWebContents[] = [];
  windowOpenHandler: ((details: { url: string }) => { action: string }) | null = null;
  sent: { channel: string; payload: unknown }[] = [];
  destroyed = false;
  url = "";
  constructor() {
    super();
    FakeWebContents.all.push(this);
  }
  setWindowOpenHandler(handler: (details: { url: string }) => { action: string }): void {
    this.windowOpenHandler = handler;
  }
  send(channel: string, payload: unknown): void {
    this.sent.push({ channel, payload });
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
  getURL(): string {
    return this.url;
  }
  /** A frame of this page, as ipcMain events carry it. */
  frame(url: string, parent: unknown = null): { url: string; parent: unknown } {
    return { url, parent };
  }
}

export class BrowserWindow extends EventEmitter {
  static created: BrowserWindow[] = [];
  readonly webContents = new FakeWebContents();
  loaded: string[] = [];
  visible = false;
  minimized = false;
  destroyed = false;
  focused = 0;
  constructor(readonly options: Record<string, unknown>) {
    super();
    BrowserWindow.created.push(this);
  }
  async loadURL(url: string): Promise<void> {
    this.loaded.push(url);
    this.webContents.url = url;
  }
  show(): void {
    this.visible = true;
  }
  hide(): void {
    this.visible = false;
  }
  focus(): void {
    this.focused++;
  }
  isVisible(): boolean {
    return this.visible;
  }
  isMinimized(): boolean {
    return this.minimized;
  }
  restore(): void {
    this.minimized = false;
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
  title = "";
  setTitle(title: string): void {
    this.title = title;
  }
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.emit("closed");
  }
}

class FakeSession {
  headersListener: ((details: { url: string; responseHeaders?: Record<string, string[]> }, cb: (r: { responseHeaders?: Record<string, string[]> }) => void) => void) | null = null;
  permissionRequest: ((wc: unknown, permission: string, cb: (granted: boolean) => void, details: { requestingUrl?: string }) => void) | null = null;
  permissionCheck: ((wc: unknown, permission: string, origin: string) => boolean) | null = null;
  readonly webRequest = {
    onHeadersReceived: (listener: FakeSession["headersListener"]) => {
      this.headersListener = listener;
    },
  };
  setPermissionRequestHandler(handler: FakeSession["permissionRequest"]): void {
    this.permissionRequest = handler;
  }
  setPermissionCheckHandler(handler: FakeSession["permissionCheck"]): void {
    this.permissionCheck = handler;
  }
}

export const session = { defaultSession: new FakeSession() };

class FakeApp extends EventEmitter {
  singleInstance = true;
  paths = new Map<string, string>();
  calls: string[] = [];
  quits = 0;
  exitCode: number | null = null;
  isPackaged = false;
  appPath = "/nonexistent/semscope";
  badge = 0;
  requestSingleInstanceLock(): boolean {
    this.calls.push("requestSingleInstanceLock");
    return this.singleInstance;
  }
  whenReady(): Promise<void> {
    this.calls.push("whenReady");
    return Promise.resolve();
  }
  enableSandbox(): void {
    this.calls.push("enableSandbox");
  }
  setAppUserModelId(id: string): void {
    this.calls.push(`setAppUserModelId:${id}`);
  }
  getPath(name: string): string {
    const p = this.paths.get(name);
    if (p === undefined) throw new Error(`fake app: no path "${name}"`);
    return p;
  }
  setPath(name: string, value: string): void {
    this.paths.set(name, value);
  }
  getAppPath(): string {
    return this.appPath;
  }
  setBadgeCount(n: number): boolean {
    this.badge = n;
    return true;
  }
  quit(): void {
    this.quits++;
    const event = new FakeEvent();
    this.emit("before-quit", event);
    if (!event.defaultPrevented) this.emit("will-quit", new FakeEvent());
  }
  exit(code: number): void {
    this.exitCode = code;
  }
}

export const app = new FakeApp();

export const ipcMain = {
  handlers: new Map<string, Listener>(),
  handle(channel: string, listener: Listener): void {
    if (this.handlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`);
    this.handlers.set(channel, listener);
  },
  removeHandler(channel: string): void {
    this.handlers.delete(channel);
  },
};

export const ipcRenderer = Object.assign(new EventEmitter(), {
  invoked: [] as { channel: string; args: unknown[] }[],
  invoke(channel: string, ...args: unknown[]): Promise<unknown> {
    this.invoked.push({ channel, args });
    return Promise.resolve({ channel });
  },
});

export const contextBridge = {
  exposed: new Map<string, unknown>(),
  exposeInMainWorld(key: string, api: unknown): void {
    this.exposed.set(key, api);
  },
};

export const Menu = {
  applicationMenu: null as unknown,
  buildFromTemplate(template: unknown[]): { template: unknown[] } {
    return { template };
  },
  setApplicationMenu(menu: unknown): void {
    this.applicationMenu = menu;
  },
};

export class Tray extends EventEmitter {
  static created: Tray[] = [];
  tooltip = "";
  title = "";
  images: unknown[] = [];
  contextMenu: unknown = null;
  destroyed = false;
  constructor(image: unknown) {
    super();
    this.images.push(image);
    Tray.created.push(this);
  }
  setImage(image: unknown): void {
    this.images.push(image);
  }
  setToolTip(t: string): void {
    this.tooltip = t;
  }
  setTitle(t: string): void {
    this.title = t;
  }
  setContextMenu(m: unknown): void {
    this.contextMenu = m;
  }
  destroy(): void {
    this.destroyed = true;
  }
}

export class Notification extends EventEmitter {
  static shown: Notification[] = [];
  static isSupported(): boolean {
    return true;
  }
  constructor(readonly options: { title: string; body: string; silent?: boolean }) {
    super();
  }
  show(): void {
    Notification.shown.push(this);
  }
}

const image = (size: number) => ({ size, resize: (o: { width: number }) => image(o.width), isEmpty: () => size === 0 });
export const nativeImage = {
  createFromBuffer: (buf: Buffer) => ({ ...image(buf.length), png: buf }),
  createEmpty: () => image(0),
};

export const dialog = {
  messages: [] as { window: unknown; options: { type?: string; title?: string; message: string; detail?: string } }[],
  errors: [] as { title: string; content: string }[],
  showMessageBox(window: unknown, options?: { message: string }): Promise<{ response: number }> {
    // Electron takes (options) alone too.
    if (options === undefined) this.messages.push({ window: null, options: window as { message: string } });
    else this.messages.push({ window, options });
    return Promise.resolve({ response: this.nextResponse });
  },
  showErrorBox(title: string, content: string): void {
    this.errors.push({ title, content });
  },
  /** What the next open / save dialog answers (a test sets it); cancelled by default. */
  nextOpen: { canceled: true, filePaths: [] as string[] },
  nextSave: { canceled: true, filePath: undefined as string | undefined },
  /** The button the next message box answers with. */
  nextResponse: 0,
  showOpenDialog(...args: unknown[]): Promise<{ canceled: boolean; filePaths: string[] }> {
    this.opened.push(args.at(-1));
    return Promise.resolve(this.nextOpen);
  },
  showSaveDialog(...args: unknown[]): Promise<{ canceled: boolean; filePath?: string }> {
    this.opened.push(args.at(-1));
    return Promise.resolve(this.nextSave);
  },
  opened: [] as unknown[],
};

/** A utility process as a real Node child: the same script, arguments and environment. */
class FakeUtilityProcess extends EventEmitter {
  readonly stdout;
  readonly stderr;
  private readonly child;
  constructor(
    readonly modulePath: string,
    readonly args: string[],
    readonly options: { env?: NodeJS.ProcessEnv; serviceName?: string; execArgv?: string[] },
  ) {
    super();
    this.child = spawn(process.execPath, [...(options.execArgv ?? []), modulePath, ...args], { env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
    this.stdout = this.child.stdout;
    this.stderr = this.child.stderr;
    this.child.once("spawn", () => this.emit("spawn"));
    // Electron's exit event has the code only.
    this.child.once("exit", (code) => this.emit("exit", code ?? 1));
  }
  get pid(): number | undefined {
    return this.child.exitCode === null && this.child.signalCode === null ? this.child.pid : undefined;
  }
  kill(): boolean {
    return this.child.kill("SIGTERM");
  }
}

export const utilityProcess = {
  forked: [] as FakeUtilityProcess[],
  fork(modulePath: string, args: string[] = [], options: ConstructorParameters<typeof FakeUtilityProcess>[2] = {}): FakeUtilityProcess {
    const p = new FakeUtilityProcess(modulePath, args, options);
    this.forked.push(p);
    return p;
  },
};

/** Back to a fresh state between tests. */
export function resetFake(): void {
  utilityProcess.forked = [];
  BrowserWindow.created = [];
  FakeWebContents.all = [];
  Tray.created = [];
  Notification.shown = [];
  app.removeAllListeners();
  app.singleInstance = true;
  app.paths.clear();
  app.calls = [];
  app.quits = 0;
  app.exitCode = null;
  app.badge = 0;
  ipcMain.handlers.clear();
  ipcRenderer.removeAllListeners();
  ipcRenderer.invoked = [];
  contextBridge.exposed.clear();
  Menu.applicationMenu = null;
  dialog.messages = [];
  dialog.errors = [];
  dialog.opened = [];
  dialog.nextOpen = { canceled: true, filePaths: [] };
  dialog.nextSave = { canceled: true, filePath: undefined };
  dialog.nextResponse = 0;
  session.defaultSession = new FakeSession();
}

export default { app, BrowserWindow, session, ipcMain, ipcRenderer, contextBridge, Menu, Tray, Notification, nativeImage, dialog, utilityProcess };
