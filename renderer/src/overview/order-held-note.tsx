// The footer's word that a list's order is held (held-order.ts), with the way to let it catch up.
import type { HeldOrder } from "./held-order.js";

export function OrderHeldNote({ order }: { order: HeldOrder<unknown> }) {
  if (!order.held) return null;
  return (
    <>
      <span className="order-held" data-testid="order-held">
        Order held while you point or select
      </span>{" "}
      <button className="btn btn-ghost btn-xs" onClick={order.resume}>
        Resume sorting
      </button>{" "}
      ·{" "}
    </>
  );
}
