// How a service reaches this hub: the agent's three lines, the hub's address, and the token to give
// it. The empty state and Settings both show this one component, so they never disagree.
import { DEFAULT_HUB } from "../data/hub-target.js";
import { useApp } from "./context.js";
import { CopyButton } from "./copy-button.js";

/** The three lines, aimed at this hub (and its token, read from the environment, never written here). */
export function agentSnippet(url: string, hasToken: boolean): string[] {
  const opts = [`service: "checkout"`, `url: "${url.replace(/\/$/, "")}"`];
  if (hasToken) opts.push("token: process.env.SEMSCOPE_TOKEN");
  return ['import { Semaphore, connect } from "semscope-agent";', `connect({ ${opts.join(", ")} });`, 'const db = new Semaphore({ name: "db", permits: 20 });'];
}

/** Services need a token: this page's, or the hub's agent token when it has one (said by the hub, never its value). */
export function useServiceToken(): { agentToken: boolean; pageToken: string | null } {
  const { target, store } = useApp();
  return { agentToken: store.hub?.agentToken === true, pageToken: target.token };
}

export function ConnectFacts() {
  const { target } = useApp();
  const { agentToken, pageToken } = useServiceToken();
  const isDefault = target.url.replace(/\/$/, "") === DEFAULT_HUB;
  const lines = agentSnippet(target.url, pageToken !== null || agentToken);
  return (
    <>
      <div className="code-box">
        <pre className="code" data-testid="agent-snippet">
          {lines.map((line) => (
            <span key={line} className="code-line">
              {line}
              {"\n"}
            </span>
          ))}
        </pre>
        <CopyButton text={`${lines.join("\n")}\n`} label="Copy code" testId="copy-snippet" />
      </div>
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
          {pageToken !== null && !agentToken && (
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
        {pageToken !== null && !agentToken && (
          <>
            {/* This page holds the token already (it connects with it); shown so a service can be given it. */}
            <dt>Hub token</dt>
            <dd className="token-row">
              <code className="token" data-testid="hub-token">
                SEMSCOPE_TOKEN={pageToken}
              </code>
              <CopyButton text={pageToken} label="Copy token" testId="copy-hub-token" />
            </dd>
          </>
        )}
      </dl>
    </>
  );
}
