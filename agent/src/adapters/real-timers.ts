// The process's own setTimeout/clearTimeout, taken when the agent loads. A test's fake timers
// (installed later) then neither count the adapters' leak watch as theirs nor fire it early: a
// `vi.runAllTimers()` would otherwise jump the faked clock to the threshold and report a false leak.
export const realSetTimeout: typeof setTimeout = globalThis.setTimeout;
export const realClearTimeout: typeof clearTimeout = globalThis.clearTimeout;
