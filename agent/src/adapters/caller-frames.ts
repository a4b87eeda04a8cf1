// A leak's stack must start at the service's own line. Some libraries reach the wrapped method
// through several frames of their own (undici's request() calls dispatch() from inside a Promise
// executor of a second request() call; bottleneck's schedule() calls _receive()), which the
// wrapper cannot skip by naming one function. This drops those frames, lazily: the stack is
// formatted only when someone reads it, as for every other capture.
import type { StackCapture } from "../permit.js";
import type { AdapterCore } from "./adapter-core.js";
import type { Wait } from "./call-list.js";

/** A capture whose frames start at the first one outside `library` and Node's internals. */
class CallerStack implements StackCapture {
  constructor(
    private readonly raw: StackCapture,
    private readonly library: RegExp,
  ) {}

  get stack(): string | undefined {
    const s = this.raw.stack;
    if (s === undefined) return undefined;
    const lines = s.split("\n");
    let i = lines[0]?.startsWith("Error") === true ? 1 : 0;
    const head = i === 1 ? [lines[0]!] : [];
    while (i < lines.length - 1 && isLibraryFrame(lines[i]!, this.library)) i++;
    return [...head, ...lines.slice(i)].join("\n");
  }
}

function isLibraryFrame(line: string, library: RegExp): boolean {
  return library.test(line) || line.includes("(node:") || line.includes(" node:") || line.endsWith("(<anonymous>)");
}

/** Frames kept while capturing: Node's fetch reaches dispatch() some 25 frames below its caller. */
const DEEP_STACK = 48;

/**
 * core.startWait(skip), with a stack (when the core takes them) that starts at the caller of
 * `library`'s frames, captured deep enough to reach it.
 */
export function startCallerWait(core: AdapterCore, skip: (...args: never[]) => unknown, library: RegExp): Wait {
  const limit = Error.stackTraceLimit;
  if (!core.stacks || typeof limit !== "number") return core.startWait(skip);
  Error.stackTraceLimit = Math.max(limit, DEEP_STACK);
  let w: Wait;
  try {
    w = core.startWait(skip);
  } finally {
    Error.stackTraceLimit = limit;
  }
  const raw = w.stack;
  // Call.stack is set once by the core; replaced here, right after startWait, before anything reads it.
  if (raw !== undefined) (w as { stack: StackCapture }).stack = new CallerStack(raw, library);
  return w;
}

/** Frames in a package's own files, wherever node_modules puts it (pnpm, workspaces, nested). */
export function packageFrames(pkg: string): RegExp {
  return new RegExp(`[\\\\/]node_modules[\\\\/](?:\\.pnpm[\\\\/][^\\\\/]+[\\\\/]node_modules[\\\\/])?${pkg}[\\\\/]`);
}
