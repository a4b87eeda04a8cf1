// One semaphore (or one fleet of replicas) in detail: live charts over a chosen window, the
// numbers now, the Little's-law readout, holders, configuration and alerts. Opened from an
// alert, the window is pinned around the moment it was raised (a red marker) until "Live".
import "./detail.css";
import { useEffect, useMemo, useState } from "react";
import { fleetKey, splitKey, type Alert } from "../../../shared/protocol/types.js";
import { useApp, useChannel } from "../app/context.js";
import { useColorScheme } from "../app/theme.js";
import { Icon, RowStatus } from "../app/widgets.js";
import type { Marker } from "../charts/chart-spec.js";
import { DetailFeed, type DetailTarget } from "../data/detail-feed.js";
import { alertTarget, RULE_LABEL } from "../logic/alert-target.js";
import { fmtClock, fmtUtc, fmtWhen } from "../logic/format.js";
import { displayStatus, type DisplayStatus } from "../logic/status.js";
import { DEFAULT_WINDOW, WINDOWS, windowMs, type WindowId } from "../logic/time-window.js";
import { useRowAlerts } from "../overview/use-row-alerts.js";
import { seekReplayToAlert } from "../alerts/alert-actions.js";
import { useReplayClient } from "../replay/replay-bar.js";
import { ChartCard } from "./chart-card.js";
import { DETAIL_CHARTS } from "./chart-specs.js";
import { useFeedStatus, useFleetEntry, useSemaphoreSlow } from "./detail-hooks.js";
import { LittlesPanel } from "./littles-panel.js";
import { AlertsPanel, ConfigPanel, HoldersPanel, ReplicasPanel } from "./side-panels.js";
import { StatStrip, useFrozen } from "./stat-strip.js";

export interface DetailViewProps {
  target: DetailTarget;
  window?: WindowId;
  at?: number;
}

/** Side panels wait at most this long for the history before mounting anyway. */
const SIDE_FALLBACK_MS = 250;

function targetKey(t: DetailTarget): string {
  return t.kind === "semaphore" ? t.key : fleetKey(t.service, t.name);
}

/** The target's alerts, and for a semaphore its agent's (agent_down: why its numbers stopped). */
function useTargetAlerts(target: DetailTarget, agent: { service: string; instance: string } | undefined): Alert[] {
  const { store } = useApp();
  const v = useChannel("alerts");
  const service = agent?.service;
  const instance = agent?.instance;
  return useMemo(() => {
    const key = targetKey(target);
    return store.alertList().filter((a) => {
      const t = alertTarget(a);
      if (t.kind === "instance") return target.kind === "semaphore" && t.service === service && t.instance === instance;
      return target.kind === "semaphore" ? t.kind === "semaphore" && t.key === key : t.kind === "fleet" && t.service === target.service && t.name === target.name;
    });
    // v: the alerts' version.
  }, [store, target, v, service, instance]);
}

export function DetailView({ target, window: windowId = DEFAULT_WINDOW, at }: DetailViewProps) {
  const { store, client, navigate } = useApp();
  const replayClient = useReplayClient();
  const replay = replayClient !== null;
  const scheme = useColorScheme();
  const [feed] = useState(() => new DetailFeed(client, store, target, windowMs(windowId), at !== undefined ? { at } : null));
  const status = useFeedStatus(feed);
  const semKey = target.kind === "semaphore" ? target.key : "";
  const sem = useSemaphoreSlow(semKey);
  const fleet = useFleetEntry(target.kind === "fleet" ? target.service : "", target.kind === "fleet" ? target.name : "");
  const alerts = useTargetAlerts(target, sem);
  const agent = sem !== undefined ? store.agents.get(sem.agentId) : undefined;
  // Every alert firing on it, as its row in the lists shows them.
  const rowAlerts = useFrozen(useRowAlerts(targetKey(target)), status.pin !== null);
  const disconnected = agent !== undefined && !agent.connected;

  // The side panels mount once the charts have their history (or after a moment without it):
  // what the user waits for when opening a view is the first chart, and mounting four panels in
  // the same task as the view delayed it.
  const [sideShown, setSideShown] = useState(false);
  useEffect(() => {
    if (sideShown) return;
    if (!status.loading) {
      setSideShown(true);
      return;
    }
    const timer = setTimeout(() => setSideShown(true), SIDE_FALLBACK_MS);
    return () => clearTimeout(timer);
  }, [sideShown, status.loading]);

  useEffect(() => {
    feed.start();
    return () => feed.stop();
  }, [feed]);
  useEffect(() => feed.setSpan(windowMs(windowId)), [feed, windowId]);
  useEffect(() => {
    if (at !== undefined) feed.pinAt(at);
    else feed.resume();
  }, [feed, at]);

  // The alert marker(s): the pinned moment, and every alert of this target raised in view.
  useEffect(() => {
    const markers: Marker[] = alerts.map((a) => ({ t: a.raisedAt, label: a.rule.replace("_", " "), title: `${RULE_LABEL[a.rule]} raised ${fmtClock(a.raisedAt)}: ${a.message}` }));
    if (at !== undefined && !alerts.some((a) => a.raisedAt === at)) markers.push({ t: at, label: "alert" });
    feed.setMarkers(markers);
  }, [feed, alerts, at]);
  useEffect(() => {
    feed.setLevels(fleet?.budget != null ? [{ chartId: "permits", value: fleet.budget, label: `budget ${fleet.budget}` }] : []);
  }, [feed, fleet?.budget]);

  const go = (patch: { window?: WindowId; at?: number | undefined }) => {
    const w = patch.window ?? windowId;
    const pinned = "at" in patch ? patch.at : at;
    const base = target.kind === "semaphore" ? { view: "semaphore" as const, key: target.key } : { view: "fleet" as const, service: target.service, name: target.name };
    navigate({ ...base, ...(w !== DEFAULT_WINDOW ? { window: w } : {}), ...(pinned !== undefined ? { at: pinned } : {}) }, { replace: true });
  };

  const pinned = status.pin;
  const live = pinned === null;
  const onPauseResume = () => {
    if (at !== undefined) go({ at: undefined });
    else if (live) feed.pause();
    else feed.resume();
  };

  const keyParts = target.kind === "semaphore" ? splitKey(target.key) : [];
  const title = target.kind === "semaphore" ? (sem?.name ?? keyParts.at(-1) ?? target.key) : target.name;
  const crumbs = target.kind === "semaphore" ? [sem?.service ?? keyParts[0], sem?.instance ?? keyParts[1]] : [target.service, `${fleet?.instances ?? "?"} replicas`];
  // Paused, the badge stays with the charts and the numbers, at the paused moment.
  const dstatus: DisplayStatus | null = useFrozen(
    sem !== undefined ? displayStatus(sem.status, store.agentConnected(sem.agentId)) : fleet !== undefined ? "ok" : null,
    !live,
  );
  const nameParts = target.kind === "semaphore" ? [crumbs[0] ?? "", crumbs[1] ?? "", title] : [target.service, title, "fleet"];
  const gone = target.kind === "semaphore" ? sem === undefined : fleet === undefined;

  return (
    <section className="view detail" data-testid="detail">
      <div className="detail-head">
        <div className="detail-title">
          <button className="btn btn-ghost btn-icon" onClick={() => navigate({ view: "overview", mode: target.kind === "fleet" ? "fleet" : "instances" })} title="Back (Esc)">
            <Icon name="back" />
          </button>
          <div>
            <div className="crumbs muted small">
              {crumbs.map((c) => (
                <span key={c}>{c} / </span>
              ))}
              {target.kind === "fleet" && <span className="tag">fleet</span>}
            </div>
            <h1>
              {title}
              {dstatus !== null && <RowStatus status={dstatus} alerts={rowAlerts} />}
              {gone && <span className="tag tag-muted">no longer reported</span>}
            </h1>
          </div>
        </div>
        <div className="detail-controls">
          <div className="segmented" role="radiogroup" aria-label="Time window">
            {WINDOWS.map((w) => (
              <button key={w.id} role="radio" aria-checked={w.id === windowId} className={w.id === windowId ? "active" : ""} onClick={() => go({ window: w.id })}>
                {w.label}
              </button>
            ))}
          </div>
          {/* A replay has its own play and pause (the replay bar): nothing here is live. */}
          {(!replay || at !== undefined) && (
            <button className={`btn ${live ? "" : "btn-primary"}`} onClick={onPauseResume} data-testid="pause">
              <Icon name={live ? "pause" : "play"} /> {live ? "Pause" : at !== undefined ? (replay ? "Follow the replay" : "Go live") : "Resume"}
            </button>
          )}
          <span className={`live-state ${live ? (disconnected ? "is-stale" : "is-live") : "is-paused"}`} data-testid="live-state">
            {live && disconnected ? (
              <span className="is-disconnected" data-testid="disconnected">
                <span className="dot" /> Agent disconnected since {fmtClock(agent.lastSeen)}
              </span>
            ) : live ? (
              <>
                <span className="dot" /> {replay ? "Replay" : "Live"} · {status.tier === "1s" ? "1 s" : "1 min"} points
              </>
            ) : pinned !== null && "at" in pinned ? (
              // In a replay, as its bar and its alerts say the time.
              <>At alert, {replay ? fmtUtc(pinned.at) : fmtWhen(pinned.at, store.now())}</>
            ) : (
              <>Paused at {pinned !== null && "end" in pinned ? fmtClock(pinned.end) : ""}</>
            )}
          </span>
        </div>
      </div>

      <StatStrip semKey={semKey} fleet={fleet} frozen={!live} stale={disconnected} />
      {status.error !== null && <div className="banner banner-error inline">Could not load history: {status.error}</div>}

      <div className="detail-body">
        <div className="charts">
          {DETAIL_CHARTS.map((spec) => (
            <ChartCard key={spec.id} spec={spec} feed={feed} themeKey={scheme} nameParts={nameParts} />
          ))}
        </div>
        <aside className="side">
          {sideShown && (
            <>
              <LittlesPanel feed={feed} />
              {target.kind === "semaphore" ? <HoldersPanel semKey={semKey} alerts={alerts} /> : <ReplicasPanel service={target.service} name={target.name} />}
              <AlertsPanel alerts={alerts} onPin={(a) => {
                  seekReplayToAlert(replayClient, a);
                  go({ at: a.raisedAt });
                }} />
              <ConfigPanel semKey={semKey} fleet={fleet} />
            </>
          )}
        </aside>
      </div>
    </section>
  );
}
