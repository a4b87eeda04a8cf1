// knex starts a transaction's connection acquire from a promise callback, where the line that
// called knex.transaction() is no longer on the stack. With leak stacks on, the adapter wraps the
// client's transaction() to take the stack there, and the transaction's acquireConnection() (an
// own property on that one transaction) to hand it to the pool's acquire, which knex calls
// synchronously from it. Anything else knex does keeps the stack taken at acquire.
import { captureStack, type StackCapture } from "../permit.js";
import { patchMethod, sameShape } from "./adapter-core.js";

type Method = (this: unknown, ...args: unknown[]) => unknown;

/** The stack the next pool acquire should report instead of its own (set only during a transaction's acquireConnection). */
export interface StackCarry {
  stack: StackCapture | undefined;
}

/** Wraps `client.transaction`; returns the undo. `on()` says whether stacks are wanted now. */
export function carryTransactionStacks(client: object, carry: StackCarry, on: () => boolean): () => void {
  const own = (client as { transaction: Method }).transaction;
  const transaction = sameShape(function (this: unknown, ...args: unknown[]): unknown {
    const trx = own.apply(this, args);
    if (!on() || trx === null || typeof trx !== "object") return trx;
    const acquireConnection = (trx as { acquireConnection?: unknown }).acquireConnection;
    if (typeof acquireConnection !== "function") return trx;
    const stack = captureStack(transaction);
    // Own property of this transaction only: it is gone with the transaction.
    (trx as { acquireConnection: Method }).acquireConnection = function (this: unknown, ...a: unknown[]): unknown {
      carry.stack = stack;
      try {
        return (acquireConnection as Method).apply(this, a);
      } finally {
        carry.stack = undefined;
      }
    };
    return trx;
  }, own);
  return patchMethod(client, "transaction", transaction);
}
