// The loans of pools that name a loan by the resource lent (generic-pool, tarn, mysql2): per
// resource, the hold now (acquired through the adapter) and the last one returned (to tell a
// second return). One state object per resource, made once and updated in place: an entry added
// and deleted per loan would churn the table and get promoted out of the young generation.
import type { AdapterCore, Failure, Hold, Wait } from "./adapter-core.js";

interface Lent {
  hold: Hold | undefined;
  last: Hold | undefined;
}

export class Loans {
  private readonly objects = new WeakMap<object, Lent>();
  /** Loans of resources that are not objects (no WeakMap key), removed when they end. */
  private readonly primitives = new Map<unknown, Lent>();

  constructor(private readonly core: AdapterCore) {}

  private state(resource: unknown, make: boolean): Lent | undefined {
    const isObject = resource !== null && (typeof resource === "object" || typeof resource === "function");
    let st = isObject ? this.objects.get(resource as object) : this.primitives.get(resource);
    if (st === undefined && make) {
      st = { hold: undefined, last: undefined };
      if (isObject) this.objects.set(resource as object, st);
      else this.primitives.set(resource, st);
    }
    return st;
  }

  /** The pool lent `resource` to the caller whose wait this hold ends. */
  lent(resource: unknown, hold: Hold): void {
    this.state(resource, true)!.hold = hold;
  }

  /**
   * What an acquire call's promise becomes: the same value or reason, one reaction later, with
   * the resource lent to `w` when it fulfils and `w` failed when it rejects.
   */
  follow(p: Promise<unknown>, w: Wait, failureOf: (err: unknown) => Failure): Promise<unknown> {
    return p.then(
      (resource) => {
        this.lent(resource, this.core.granted(w));
        return resource;
      },
      (err: unknown) => {
        this.core.failed(w, failureOf(err));
        throw err;
      },
    );
  }

  /**
   * `resource` came back through `skip`. `borrowed`: the pool had it on loan (so this return
   * ends the loan); otherwise a return of a resource the adapter saw lent and returned already is
   * a double release. A return of a resource never lent through the adapter is the pool's business.
   */
  returned(resource: unknown, borrowed: boolean | undefined, skip: (...args: never[]) => unknown): void {
    const st = this.state(resource, false);
    if (st === undefined) return;
    const h = st.hold;
    // undefined: on loan if the adapter saw it lent and not returned.
    if (borrowed === undefined) borrowed = h !== undefined;
    if (h !== undefined && borrowed) {
      st.hold = undefined;
      this.core.released(h, skip);
      if (this.primitives.get(resource) === st) this.primitives.delete(resource);
      else st.last = h;
    } else if (st.last !== undefined && !borrowed) {
      this.core.doubleRelease(st.last, skip);
    }
  }

  clear(): void {
    this.primitives.clear();
  }
}
