// Connected, but no agent has reported yet: show how to embed one, and where this hub is.
import { DEFAULT_HUB } from "../data/hub-target.js";
import { useApp } from "./context.js";

/** The three lines, aimed at this hub (and its token, read from the environment, never written here). */
export function agentSnippet(url: string, hasToken: boolean): string[] {
  const opts = [`service: "checkout"`, `url: "${url.replace(/\/$/, "")}"`];
  if (hasToken) opts.push("token: process.env.SEMSCOPE_TOKEN");
  return ['import { Semaphore, connect } from "semscope-agent";', `connect({ ${opts.join(", ")} });`, 'const db = new Semaphore({ name: "db", permits: 20 });'];
}

export function EmptyState() {
  const { target, store } = useApp();
  const isDefault = target.url.replace(/\/$/, "") === DEFAULT_HUB;
  // With an agent token the page's token opens the dashboard too: services are given the other one.
  const agentToken = store.hub?.agentToken === true;
  return (
    <div className="center-card">
      <div className="card empty-card" data-testid="empty-state">
        <h2>No semaphores yet</h2>
        <p className="muted">
          Semscope shows every semaphore an agent reports. Add the agent to a Node service with three lines, run it, and its
          semaphores appear here within a second.
        </p>
        <pre className="code" data-testid="agent-snippet">
          {agentSnippet(target.url, target.token !== null).map((line) => (
            <span key={line} className="code-line">
              {line}
              {"\n"}
            </span>
          ))}
        </pre>
        <dl className="facts">
          <dt>Hub address</dt>
          <dd>
            <code data-testid="hub-address">{target.url}</code>
          </dd>
          <dt>Point agents at it</dt>
          <dd>
            {isDefault ? (
              <>the default; nothing to set</>
            ) : (
              <>
                <code>SEMSCOPE_URL={target.url}</code> or <code>connect({`{ service: "checkout", url: "${target.url}" }`})</code>
              </>
            )}
            {target.token !== null && !agentToken && (
              <>
                , with the hub's token in <code>SEMSCOPE_TOKEN</code>
              </>
            )}
            {agentToken && (
              <span data-testid="agent-token-note">
                , with the hub's agent token (its <code>--agent-token</code>) in <code>SEMSCOPE_TOKEN</code>: this page's token
                opens the dashboard, so services are not given it
              </span>
            )}
          </dd>
          {target.token !== null && !agentToken && (
            <>
              {/* This page holds the token already (it connects with it); shown so a service can be given it. */}
              <dt>Hub token</dt>
              <dd>
                <code className="token" data-testid="hub-token">
                  SEMSCOPE_TOKEN={target.token}
                </code>
              </dd>
            </>
          )}
        </dl>
      </div>
    </div>
  );
}
