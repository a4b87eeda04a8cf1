// What every socket.io namespace of the hub (agents, dashboards, replays) does with a message:
// split off its ack, answer it without throwing, and keep a handler's bug to that one message.

/** socket.io appends the ack callback as the last argument, when the client asked for one. */
export function splitArgs(args: unknown[]): { payload: unknown; ack: ((answer: unknown) => void) | undefined } {
  const last = args.at(-1);
  if (typeof last === "function") {
    return { payload: args.length > 1 ? args[0] : undefined, ack: last as (answer: unknown) => void };
  }
  return { payload: args[0], ack: undefined };
}

export function reply(ack: ((answer: unknown) => void) | undefined, answer: unknown): void {
  if (ack === undefined) return;
  try {
    ack(answer);
  } catch {
    // An answer that cannot be sent (connection gone) is nothing the hub can act on.
  }
}

/**
 * Runs a handler so that a bug in it costs one message, not the process: socket.io calls
 * listeners synchronously from the socket's data handler, where a throw would be uncaught.
 */
export function contained<T>(what: string, log: (line: string) => void, fallback: T, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    log(`semscope hub: ${what} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return fallback;
  }
}
