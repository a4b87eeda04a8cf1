// Connected, but no agent has reported yet: show how to embed one, and where this hub is.
import { ConnectFacts } from "./connect-facts.js";

export function EmptyState() {
  return (
    <div className="center-card">
      <div className="card empty-card" data-testid="empty-state">
        <h2>No semaphores yet</h2>
        <p className="muted">
          Semscope shows every semaphore an agent reports. Add the agent to a Node service with three lines, run it, and its
          semaphores appear here within a second.
        </p>
        <ConnectFacts />
      </div>
    </div>
  );
}
