// The detail view's panels beside the charts: who holds permits (and, for a suspected leak,
// where each was acquired), the semaphore's configuration, and its alerts.
import { useMemo, useState } from "react";
import type { UiFleetEntry } from "../../../shared/ui-protocol/types.js";
import type { Alert } from "../../../shared/protocol/types.js";
import { useApp, useChannel, useStoreValue } from "../app/context.js";
import { Opening, StatusBadge, TurnWait } from "../app/widgets.js";
import { RULE_LABEL } from "../logic/alert-target.js";
import { holderAge, leakHolders } from "../logic/evidence.js";
import { fmtAgo, fmtCount, fmtDuration, fmtWhen } from "../logic/format.js";
import { waitingForTurn } from "../logic/share-turn.js";
import { useSemaphore } from "./detail-hooks.js";

/** First lines of a stack that are the user's code, not node internals. */
function trimStack(stack: string): string {
  return stack
    .split("\n")
    .filter((l) => !/\(node:|node:internal|^\s*at new Promise/.test(l))
    .slice(0, 14)
    .join("\n");
}

export function HoldersPanel({ semKey, alerts }: { semKey: string; alerts: readonly Alert[] }) {
  const sem = useSemaphore(semKey);
  const leak = alerts.find((a) => a.rule === "leak" && a.resolvedAt === null) ?? alerts.find((a) => a.rule === "leak");
  const holders = useMemo(() => leakHolders(leak?.evidence), [leak]);
  // The longest-held first holder's stack is open: it is usually the one to read.
  const [open, setOpen] = useState<string | null>(() => holders[0]?.holderId ?? null);
  // Ages in the agent's clock, against its latest sample, so a skewed browser clock cannot distort them.
  const now = sem?.t ?? Date.now();
  const last = sem?.last;
  return (
    <div className="card panel" data-testid="holders">
      <div className="card-head">
        <h3>Holders</h3>
        {leak !== undefined && <span className={`tag ${leak.resolvedAt === null ? "tag-leak" : "tag-muted"}`}>{leak.resolvedAt === null ? "leak suspected" : "leak resolved"}</span>}
      </div>
      <dl className="kv">
        <dt>Permits held now</dt>
        <dd className="mono">
          {sem === undefined ? "—" : `${fmtCount(sem.inUse)} of ${fmtCount(sem.cap)}`}
        </dd>
        <dt>Oldest holder’s age</dt>
        <dd className="mono">{last === null || last === undefined ? "—" : fmtDuration(last.longestHoldMs)}</dd>
        <dt>Typical hold (p50 / p99)</dt>
        <dd className="mono">{last === null || last === undefined ? "—" : `${fmtDuration(last.holdMs.p50)} / ${fmtDuration(last.holdMs.p99)}`}</dd>
      </dl>
      {holders.length > 0 ? (
        <>
          <h4 className="subhead">Suspected leaked permits</h4>
          <ul className="holders">
            {holders.map((h) => (
              <li key={h.holderId} className="holder">
                <button className="holder-head" onClick={() => setOpen(open === h.holderId ? null : h.holderId)} aria-expanded={open === h.holderId}>
                  <span className="mono">{h.holderId}</span>
                  <span className="mono bad-text">{leak?.resolvedAt === null ? `held ${fmtDuration(holderAge(h, now))}` : `held ${fmtDuration(h.heldMs)}`}</span>
                </button>
                {h.stack !== null && open === h.holderId && <pre className="stack" data-testid="leak-stack">{trimStack(h.stack)}</pre>}
                {h.stack === null && <span className="muted small">no stack captured (the agent records stacks when leak detection is on)</span>}
              </li>
            ))}
          </ul>
        </>
      ) : (
        <p className="muted small">
          The agent reports the oldest holder’s age each second; individual holders and their acquisition stacks appear here when it suspects a leak.
        </p>
      )}
    </div>
  );
}

const ms = (v: number | null | undefined): string => (v === null || v === undefined ? "none" : fmtDuration(v));

export function ConfigPanel({ semKey, fleet }: { semKey: string; fleet: UiFleetEntry | undefined }) {
  const { store } = useApp();
  const sem = useSemaphore(semKey);
  // The agents channel moves with every delta that touches any agent: re-render only when this
  // semaphore's agent changes (the object is replaced on each of its updates).
  const agent = useStoreValue("agents", () => (sem === undefined ? undefined : store.agents.get(sem.agentId)));
  // Absent for a semaphore its agent never registered (seen in samples only).
  const config = sem?.config;
  return (
    <div className="card panel" data-testid="config">
      <div className="card-head">
        <h3>Configuration</h3>
      </div>
      {sem !== undefined && (
        <dl className="kv">
          <dt>Name / id</dt>
          <dd className="mono">
            {sem.name}
            {sem.id !== sem.name && <span className="muted"> · {sem.id}</span>}
          </dd>
          <dt>Kind</dt>
          <dd className="mono">{sem.kind}</dd>
          <dt>Permits (N)</dt>
          <dd className="mono">{fmtCount(sem.cap)}</dd>
          {config !== undefined ? (
            <>
              <dt>Queue</dt>
              <dd className="mono" data-testid="config-queue">{config.queue}</dd>
              <dt>Max waiters</dt>
              <dd className="mono" data-testid="config-max-waiters">{config.maxWaiters ?? "unbounded"}</dd>
              <dt>Acquire timeout</dt>
              <dd className="mono" data-testid="config-acquire-timeout">{ms(config.acquireTimeoutMs)}</dd>
              <dt>Lease timeout</dt>
              <dd className="mono" data-testid="config-lease-timeout">{ms(config.leaseTimeoutMs)}</dd>
              <dt>Leak threshold</dt>
              <dd className="mono" data-testid="config-leak-threshold">{ms(config.leakThresholdMs)}</dd>
              <dt>Scope</dt>
              <dd className="mono" data-testid="config-scope">{config.scope === "global" ? "global (one N for all replicas)" : "per process"}</dd>
              <dt>Fleet budget</dt>
              <dd className="mono" data-testid="config-budget">{config.budget === undefined ? "none declared" : fmtCount(config.budget)}</dd>
            </>
          ) : (
            <>
              <dt>Registration</dt>
              <dd className="muted small">not registered by its agent (seen in samples only)</dd>
            </>
          )}
          <dt>Service / instance</dt>
          <dd className="mono">
            {sem.service} / {sem.instance}
          </dd>
          <dt>Agent</dt>
          <dd>
            {agent === undefined ? "—" : agent.connected ? <span className="good-text">connected</span> : <span className="muted">disconnected, last seen {fmtAgo(agent.lastSeen, store.now())}</span>}
          </dd>
          <dt>Last sample</dt>
          <dd className="mono">{sem.t === null ? "none yet" : fmtWhen(sem.t, store.now())}</dd>
        </dl>
      )}
      {fleet !== undefined && (
        <dl className="kv">
          <dt>Scope</dt>
          <dd className="mono">{fleet.scope === "global" ? "global (one N for all replicas)" : "per process (N per replica)"}</dd>
          <dt>Live replicas</dt>
          <dd className="mono">{fleet.instances}</dd>
          <dt>{fleet.scope === "global" ? "Global N" : "Σ N over replicas"}</dt>
          <dd className="mono">{fmtCount(fleet.cap)}</dd>
          <dt>Fleet budget</dt>
          <dd className={`mono ${fleet.overBudget ? "bad-text" : ""}`}>{fleet.budget === null ? "none declared" : `${fmtCount(fleet.budget)}${fleet.overBudget ? " (exceeded)" : ""}`}</dd>
        </dl>
      )}
    </div>
  );
}

export function AlertsPanel({ alerts, onPin }: { alerts: readonly Alert[]; onPin: (a: Alert) => void }) {
  const { store } = useApp();
  return (
    <div className="card panel" data-testid="detail-alerts">
      <div className="card-head">
        <h3>Alerts</h3>
        <span className="muted small">{alerts.filter((a) => a.resolvedAt === null).length} active</span>
      </div>
      {alerts.length === 0 ? (
        <p className="muted small">No alerts for this semaphore.</p>
      ) : (
        <ul className="mini-alerts">
          {alerts.slice(0, 8).map((a) => (
            <li key={a.id} className={`mini-alert sev-${a.severity} ${a.resolvedAt === null ? "active" : "resolved"}`}>
              <button onClick={() => onPin(a)} title="Show the charts at the moment it was raised">
                <span className="mini-alert-rule">{RULE_LABEL[a.rule]}</span>
                <span className="muted small">
                  {fmtWhen(a.raisedAt, store.now())}
                  {a.resolvedAt !== null ? " · resolved" : ""}
                </span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function ReplicasPanel({ service, name }: { service: string; name: string }) {
  const { store, navigate } = useApp();
  useChannel("semaphores");
  const members = store.itemList().filter((it) => it.service === service && it.name === name);
  return (
    <div className="card panel" data-testid="replicas">
      <div className="card-head">
        <h3>Replicas</h3>
        <span className="muted small">{members.length}</span>
      </div>
      <table className="mini-table">
        <thead>
          <tr>
            <th>Instance</th>
            <th>Status</th>
            <th className="num">In use / N</th>
            <th className="num">Waiters</th>
          </tr>
        </thead>
        <tbody>
          {members.map((m) => (
            <tr key={m.key} onClick={() => navigate({ view: "semaphore", key: m.key })} className="clickable">
              <td className="mono">{m.instance}</td>
              <td>
                <StatusBadge status={m.status} />
                {m.connected && m.share !== undefined && waitingForTurn(m.share) && <TurnWait share={m.share} />}
              </td>
              <td className="num mono">
                {fmtCount(m.inUse)} / {fmtCount(m.cap)} <Opening n={m.opening} />
              </td>
              <td className="num mono">{fmtCount(m.waiters)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
