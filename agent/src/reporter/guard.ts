// The agent never throws into its host: every callback that the host's event loop, socket.io or
// the registry calls into goes through here.

/** Errors swallowed so far, for status(); the agent has no logger of its own to put them in. */
export const swallowed = { count: 0, last: null as string | null };

export function guard(f: () => void): void {
  try {
    f();
  } catch (err) {
    swallowed.count++;
    swallowed.last = err instanceof Error ? err.message : String(err);
  }
}
