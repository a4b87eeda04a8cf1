// The semantic suite with the flight recorder off, and with a tiny ring that wraps all the time:
// the recorder must change no behaviour (semaphore-semantics.test.ts runs it on, the default).
import { Semaphore } from "../../agent/src/index.js";
import { semaphoreSemantics, type Capabilities } from "./semantic-suite.js";

const ALL: Capabilities = {
  queueModes: ["fifo", "lifo", "priority", "adaptive"],
  weights: true,
  timeouts: true,
  abort: true,
  maxWaiters: true,
  tryAcquire: true,
  use: true,
  dispose: true,
  noBarging: true,
  argumentChecks: true,
  doubleReleaseDetection: true,
  leases: true,
  leakDetection: true,
  orderInversion: true,
  close: true,
  resize: true,
  sample: true,
};

semaphoreSemantics("Semaphore, flight recorder off", (options) => new Semaphore({ ...options, flightRecorder: false }), ALL);
semaphoreSemantics("Semaphore, flight recorder of 2 operations", (options) => new Semaphore({ ...options, flightRecorder: 2 }), ALL);
