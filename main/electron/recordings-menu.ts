// File → Open Recording… / Save Recording…: Electron's dialogs and a window for the replay, around
// main/app/recordings-shell.ts. The replay window has no preload (no settings, no hub bridge): the
// page finds its hub at its own origin, the replay hub, and shows itself in replay mode.
import { BrowserWindow, dialog, type BrowserWindow as Win } from "electron";
import { join } from "node:path";
import { RecordingsShell, SAVE_PRESETS } from "../app/recordings-shell.js";
import { LOCKED_DOWN_WEB_PREFERENCES } from "./window.js";

export class RecordingsMenu {
  private window: Win | null = null;

  constructor(
    private readonly shell: RecordingsShell,
    private readonly parent: () => Win | null,
    private readonly log: (line: string) => void,
  ) {}

  async open(): Promise<void> {
    const parent = this.parent();
    const options = {
      title: "Open Recording",
      defaultPath: this.shell.folder,
      properties: ["openFile" as const],
      filters: [
        { name: "Semscope recordings", extensions: ["gz", "ndjson", "jsonl"] },
        { name: "All files", extensions: ["*"] },
      ],
    };
    const picked = parent === null ? await dialog.showOpenDialog(options) : await dialog.showOpenDialog(parent, options);
    const file = picked.filePaths[0];
    if (picked.canceled || file === undefined) return;
    try {
      const opened = await this.shell.open(file);
      this.show(opened.url, file);
    } catch (err) {
      this.problem("Could not open the recording", err);
    }
  }

  async save(): Promise<void> {
    const parent = this.parent();
    const choice = await dialog.showMessageBox({
      type: "question",
      title: "Save Recording",
      message: "Which part of the local hub's recordings?",
      buttons: [...SAVE_PRESETS.map((p) => p.label), "Cancel"],
      cancelId: SAVE_PRESETS.length,
    });
    if (choice.response >= SAVE_PRESETS.length) return;
    const { from, to } = this.shell.presetRange(choice.response);
    const options = { title: "Save Recording", defaultPath: join(this.shell.folder, "saved", "recording.ndjson.gz") };
    const target = parent === null ? await dialog.showSaveDialog(options) : await dialog.showSaveDialog(parent, options);
    if (target.canceled || target.filePath === undefined) return;
    try {
      const saved = await this.shell.save(target.filePath, from, to);
      for (const w of saved.warnings) this.log(`semscope: ${w}`);
    } catch (err) {
      this.problem("Could not save the recording", err);
    }
  }

  close(): void {
    this.window?.destroy();
    void this.shell.closeReplay();
  }

  private show(url: string, file: string): void {
    if (this.window === null || this.window.isDestroyed()) {
      this.window = new BrowserWindow({ width: 1280, height: 820, title: `Semscope: replay of ${file}`, webPreferences: { ...LOCKED_DOWN_WEB_PREFERENCES } });
      this.window.on("closed", () => {
        this.window = null;
        void this.shell.closeReplay();
      });
    }
    this.window.setTitle(`Semscope: replay of ${file}`);
    void this.window.loadURL(url);
    this.window.show();
  }

  private problem(title: string, err: unknown): void {
    const detail = err instanceof Error ? err.message : String(err);
    this.log(`semscope: ${title}: ${detail}`);
    void dialog.showMessageBox({ type: "warning", title, message: title, detail });
  }
}
