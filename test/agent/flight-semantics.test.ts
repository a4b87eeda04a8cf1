// The semantic suite with the flight recorder off, and with a tiny ring that wraps all the time:
// the recorder must change no behaviour (semaphore-semantics.test.ts runs it on, the default).
import { Semaphore } from "../../agent/src/index.js";
import { EVERY_CAPABILITY, semaphoreSemantics } from "./semantic-suite.js";

semaphoreSemantics("Semaphore, flight recorder off", (options) => new Semaphore({ ...options, flightRecorder: false }), EVERY_CAPABILITY);
semaphoreSemantics("Semaphore, flight recorder of 2 operations", (options) => new Semaphore({ ...options, flightRecorder: 2 }), EVERY_CAPABILITY);
