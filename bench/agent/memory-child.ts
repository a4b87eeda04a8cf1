// Child process entry for one bytes_per_waiter sample (see cases/memory.ts for why a child).
// argv: <contender name> <waiters> <permits>. Prints {"bytesPerWaiter": n} as its last line.

import { findContender } from "./contenders.js";
import { measureBytesPerWaiter } from "./cases/memory.js";

const [name, waitersArg, permitsArg] = process.argv.slice(2);
const waiters = Number(waitersArg);
const permits = Number(permitsArg);
const contender = findContender(name ?? "");
if (!contender || !(waiters > 0) || !(permits > 0)) {
  console.error(`usage: memory-child.ts <contender> <waiters> <permits>; got ${process.argv.slice(2).join(" ")}`);
  process.exit(2);
}
// Warm-up: compile the enqueue/drain paths on a small queue, so the measured run allocates no code
// or type feedback of its own. It is a separate instance, so nothing it grows carries over.
await measureBytesPerWaiter(contender, Math.min(1_000, waiters), permits);
const bytesPerWaiter = await measureBytesPerWaiter(contender, waiters, permits);
console.log(JSON.stringify({ bytesPerWaiter }));
