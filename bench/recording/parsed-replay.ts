// The replay as it was before it held its recording compressed: every checked line kept parsed in
// an array, one pass to the end for the timeline's alerts, and a seek back feeding from the first
// line. The peer bench:recording measures the replay against, fed by the same code (replay-feed.ts).
import { readRecording } from "../../main/hub/recording/recording-reader.js";
import type { AnyRecordLine } from "../../main/hub/recording/recording-line.js";
import { ReplayFeed } from "../../main/hub/recording/replay-feed.js";

export class ParsedReplay {
  private readonly at = new ReplayFeed({});
  private next = 0;
  readonly from: number;
  readonly to: number;
  readonly marks: number;

  private constructor(private readonly lines: readonly AnyRecordLine[]) {
    const timed = lines.filter((l) => l.k !== "range");
    this.from = timed[0]?.r ?? 0;
    this.to = timed.at(-1)?.r ?? 0;
    this.at.reset(this.from);
    const marks = new Map<string, number>();
    this.advanceTo(this.to, () => {
      for (const c of this.at.core.changes.take().alerts) if (!marks.has(c.alert.id)) marks.set(c.alert.id, this.at.clock);
    });
    this.marks = marks.size;
    this.seek(Math.min(...marks.values(), this.to));
  }

  static async open(file: string): Promise<ParsedReplay> {
    const lines: AnyRecordLine[] = [];
    await readRecording(file, (line) => void lines.push(line));
    return new ParsedReplay(lines);
  }

  seek(t: number): void {
    const target = Math.min(this.to, Math.max(this.from, t));
    if (target < this.at.clock) {
      this.at.reset(this.from);
      this.next = 0;
    }
    this.advanceTo(target);
    this.at.core.changes.take();
  }

  private advanceTo(t: number, after?: () => void): void {
    while (this.next < this.lines.length && this.lines[this.next].r <= t) {
      this.at.take(this.lines[this.next++]);
      after?.();
    }
    this.at.clock = Math.max(this.at.clock, t);
  }
}
