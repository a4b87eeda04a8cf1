// What a randomised /ui fleet test does between two looks: three agents (two replicas of one
// service, so groups have two members) sampling, registering and leaving. Shared by the fleet
// view's test (in-process) and the sliced deltas' test (a real hub).
import fc from "fast-check";

export const IDS = ["db", "cache", "http"];
export const AGENTS = [
  { agentId: "a1", service: "checkout", instance: "web-1" },
  { agentId: "a2", service: "checkout", instance: "web-2" },
  { agentId: "a3", service: "search", instance: "web-1" },
];

/** Samples of some of an agent's semaphores, or its register of a subset of them. */
export const agentStepArb = (ids: readonly string[]) =>
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({
        kind: fc.constant("samples" as const),
        agent: fc.nat(AGENTS.length - 1),
        ids: fc.subarray([...ids], { minLength: 1 }),
        inUse: fc.nat(10),
        waits: fc.array(fc.integer({ min: 1, max: 5000 }), { maxLength: 4 }),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("register" as const), agent: fc.nat(AGENTS.length - 1), ids: fc.subarray([...ids]) }) },
  );
