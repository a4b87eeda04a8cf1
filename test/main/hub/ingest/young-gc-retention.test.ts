// A lane's finished messages die young, even after a start-up where messages waited.
//
// Why it matters: V8 pretenures an allocation site (object and array literals) whose objects
// outlived young GCs, and an object in the old generation, alive or not, keeps whatever young
// object it points at alive through every young GC until the next full one. The scheduler once made
// a { job, item } object per message; at start-up, while 1,000 agents' first batches waited, those
// objects lived long, and in some runs V8 pretenured them for good: every later message's parsed
// packet was then promoted (~15 MB a young GC) and the hub ran a full GC every few seconds. Two
// defences, each held here on its own: the scheduler makes no object per message, and the hub
// runs with pretenuring off (node-flags.ts).
// The child is fixtures/young-gc-retention.ts; its control, a lane that still makes that object,
// shows the test can see the leak.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { HUB_NODE_FLAGS } from "../../../../main/hub/node-flags.js";

const FIXTURE = fileURLToPath(new URL("../fixtures/young-gc-retention.ts", import.meta.url));
const NO_PRETENURING = "--no-allocation-site-pretenuring";
/** The hub's flags with V8's pretenuring left on: what a host embedding createHub() may run. */
const PRETENURING = HUB_NODE_FLAGS.filter((f) => f !== NO_PRETENURING);

interface Outcome {
  sent: number;
  /** What the young GC after each chunk of finished messages found still alive, summed. */
  retained: number;
  /** What the same messages' packets take while alive. */
  packetBytes: number;
}

async function run(flags: readonly string[], mode: "scheduler" | "control", apply = false): Promise<Outcome> {
  const args = [...flags, "--expose-gc", "--import", "tsx", FIXTURE, mode, ...(apply ? ["apply"] : [])];
  const { stdout } = await promisify(execFile)(process.execPath, args, { timeout: 60_000 });
  return JSON.parse(stdout.trim().split("\n").pop() as string) as Outcome;
}

/** Share of the finished messages' packets still alive after young GCs. */
const share = (o: Outcome) => o.retained / o.packetBytes;

describe("young-GC retention of finished messages", () => {
  it("is nil for the agent scheduler's lanes, where a lane making an object per message keeps most packets", async () => {
    const [scheduler, control] = await Promise.all([run(PRETENURING, "scheduler"), run(PRETENURING, "control")]);
    expect(scheduler.sent).toBe(6000);
    // The premise, on this node: pretenured per-message holders keep the packets they pointed at.
    expect(share(control)).toBeGreaterThan(0.3);
    // The scheduler: what is left is noise (other garbage, young GC bookkeeping), not packets.
    expect(share(scheduler)).toBeLessThan(0.05);
  }, 90_000);

  it("is nil under the hub's node flags even for that lane, given at launch or set by the running process", async () => {
    expect(HUB_NODE_FLAGS).toContain(NO_PRETENURING);
    const [launched, applied] = await Promise.all([run(HUB_NODE_FLAGS, "control"), run(PRETENURING, "control", true)]);
    expect(share(launched)).toBeLessThan(0.05);
    expect(share(applied)).toBeLessThan(0.05);
  }, 90_000);
});
