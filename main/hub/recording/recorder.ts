// The recording (`--record <file>`): one NDJSON line per input the alert engine got, in the order
// it got them, each with the hub time it used (docs/protocol.md, "Recording"). Every line is
// written synchronously, so a crash loses at most the line being written, and replay.ts can feed
// the same calls to a fresh engine and raise the same alerts.
import { closeSync, openSync, writeSync } from "node:fs";
import { RECORDING_FILE_MODE } from "./recording-writer.js";
import type { RecordLine, RecordSink } from "../core/record-line.js";

export class Recorder implements RecordSink {
  private fd: number | undefined;
  lines = 0;
  bytes = 0;
  failed: string | null = null;

  /** Opens (creating or appending to) `file`; throws when it cannot. */
  constructor(
    readonly file: string,
    private readonly log: (line: string) => void,
  ) {
    this.fd = openSync(file, "a", RECORDING_FILE_MODE);
  }

  write(line: RecordLine): void {
    if (this.fd === undefined) return;
    const buf = Buffer.from(`${JSON.stringify(line)}\n`, "utf8");
    try {
      let off = 0;
      while (off < buf.length) off += writeSync(this.fd, buf, off, buf.length - off);
      this.lines++;
      this.bytes += buf.length;
    } catch (err) {
      // A full disk must not take the hub down: stop recording, say so once.
      this.failed = err instanceof Error ? err.message : String(err);
      this.log(`semscope hub: recording to ${this.file} stopped: ${this.failed}`);
      this.close();
    }
  }

  get open(): boolean {
    return this.fd !== undefined;
  }

  close(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    try {
      closeSync(fd);
    } catch {
      // Nothing left to lose: every line was written synchronously.
    }
  }
}
