// The shared semantic suite against each instrumented library, with what each library offers.
// A capability set to false is a semantic the library itself lacks (the reason shows in the
// skipped case's name); the adapter adds none, since it must not change the target's behaviour.
import { semaphoreSemantics, type Capabilities } from "../semantic-suite.js";
import { asyncMutexSubject, genericPoolSubject, pgPoolSubject, pLimitSubject, pQueueSubject, tarnSubject } from "./subjects.js";

const BASE: Capabilities = {
  queueModes: ["fifo"],
  weights: false,
  timeouts: false,
  abort: false,
  maxWaiters: false,
  tryAcquire: false,
  use: true,
  dispose: false,
  noBarging: true,
  argumentChecks: false,
  doubleReleaseDetection: false,
  leases: false,
  leakDetection: true,
  orderInversion: false,
  close: false,
  resize: false,
  sample: true,
  realTimerLeakWatch: true,
};
const COMMON = {
  timeouts: "no per-acquire timeout (a pool-wide one at most)",
  maxWaiters: "no bound on waiters",
  tryAcquire: "no tryAcquire()",
  dispose: "no Disposable permits",
  argumentChecks: "its own argument errors, not Semscope's",
  orderInversion: "order inversions are the Semaphore's own feature",
  close: "no close(); untrack() only stops reporting",
  leases: "no lease",
} as const;

semaphoreSemantics(
  "async-mutex",
  asyncMutexSubject,
  { ...BASE, queueModes: ["fifo", "priority"], doubleReleaseDetection: true },
  { ...COMMON, weights: "async-mutex queues a weight above its permits forever instead of refusing it (weights are tested in async-mutex.test.ts)", abort: "no abort signal", resize: "setValue() sets what is free, not the cap" },
);
semaphoreSemantics(
  "generic-pool",
  genericPoolSubject,
  { ...BASE },
  {
    ...COMMON,
    weights: "no weights",
    abort: "no abort signal",
    resize: "no resize",
    doubleReleaseDetection: "generic-pool identifies a loan by the resource, so a late second release of a re-lent resource returns the new borrower's loan (detection of the plain case is tested in generic-pool.test.ts)",
  },
);
semaphoreSemantics(
  "p-limit",
  pLimitSubject,
  { ...BASE, resize: true, asyncRelease: true },
  { ...COMMON, weights: "no weights", abort: "no abort signal", doubleReleaseDetection: "a task ends once; there is no release() to call twice" },
);
semaphoreSemantics(
  "p-queue",
  pQueueSubject,
  { ...BASE, queueModes: ["fifo", "priority"], resize: true, leases: true, asyncRelease: true },
  {
    ...COMMON,
    leases: undefined,
    weights: "no weights",
    abort: "p-queue's signal also aborts a running task, freeing its slot (abort while queued is tested in p-queue.test.ts)",
    doubleReleaseDetection: "a task ends once; there is no release() to call twice",
  },
);
semaphoreSemantics(
  "pg-pool",
  pgPoolSubject,
  { ...BASE, use: false, doubleReleaseDetection: true },
  { ...COMMON, weights: "no weights", abort: "no abort signal", resize: "no resize", use: "pool.query() runs SQL, not a callback", timeouts: "connectionTimeoutMillis is pool-wide, not per acquire" },
);
semaphoreSemantics(
  "tarn",
  tarnSubject,
  { ...BASE, use: false, reactionDepth: 32 },
  {
    ...COMMON,
    weights: "no weights",
    abort: "no abort signal",
    resize: "no resize",
    use: "no use(); knex runs queries, not callbacks",
    timeouts: "acquireTimeoutMillis is pool-wide, not per acquire",
    doubleReleaseDetection: "tarn identifies a loan by the resource, so a late second release of a re-lent resource returns the new borrower's loan (detection of the plain case is tested in tarn.test.ts)",
  },
);
