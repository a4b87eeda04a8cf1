// Replay mode's controls, under the header: a banner saying this is a recording (and where a
// damaged one stopped loading), the timeline with the alerts marked on it, the scrubber, play /
// pause at 1×–60×, and "next alert". Renders nothing on a live hub.
import { createContext, useContext, useEffect, useMemo, useState, useSyncExternalStore } from "react";
import { isReplayVersion, REPLAY_SPEEDS, type ReplayMark, type ReplayStatus } from "../../../shared/ui-protocol/replay.js";
import { useApp, useChannel } from "../app/context.js";
import { RULE_LABEL } from "../logic/alert-target.js";
import { fmtUtc } from "../logic/format.js";
import { ReplayClient } from "./replay-client.js";
import "./replay.css";
import { errorText } from "../logic/error-text.js";

const ReplayContext = createContext<ReplayClient | null>(null);

/** Makes the replay client (one per page) and gives it to ReplayBar and useReplayEpoch. */
export function ReplayProvider({ children }: { children: React.ReactNode }) {
  const { target, store } = useApp();
  const client = useMemo(() => new ReplayClient(target), [target]);
  // The snapshot says whether this hub replays a recording; only then is /replay asked for.
  const structure = useChannel("structure");
  const replay = isReplayVersion(store.hub?.version);
  useEffect(() => {
    if (replay) client.start();
  }, [client, replay, structure]);
  useEffect(() => () => client.stop(), [client]);
  return <ReplayContext.Provider value={client}>{children}</ReplayContext.Provider>;
}

function useReplay(): { client: ReplayClient | null; status: ReplayStatus | null } {
  const client = useContext(ReplayContext);
  useSyncExternalStore(client?.subscribe ?? noSubscribe, client?.getVersion ?? zero);
  return { client, status: client?.status ?? null };
}
const noSubscribe = () => () => undefined;
const zero = () => 0;

/** True once the hub has said it serves a recording (re-renders only when that changes). */
export function useIsReplay(): boolean {
  const client = useContext(ReplayContext);
  return useSyncExternalStore(client?.subscribe ?? noSubscribe, () => client?.status != null);
}

/** The replay's client once the hub has said it serves a recording, else null. */
export function useReplayClient(): ReplayClient | null {
  const client = useContext(ReplayContext);
  return useIsReplay() ? client : null;
}

/**
 * Changes when a replay's cursor jumps: a key for views that load history once. Re-renders its
 * caller only then, not on every status while playing.
 */
export function useReplayEpoch(): number {
  const client = useContext(ReplayContext);
  return useSyncExternalStore(client?.subscribe ?? noSubscribe, () => client?.epoch ?? 0);
}

const SCRUB_STEP_MS = 100;

/** "Convoy on checkout/web-1/payments": which alert a mark is. */
function markName(m: ReplayMark): string {
  return `${RULE_LABEL[m.rule]} on ${m.key}`;
}

function markTitle(m: ReplayMark): string {
  return `${m.severity} ${m.rule} · ${m.key} · ${fmtUtc(m.raisedAt)}${m.resolvedAt === null ? "" : ` → ${fmtUtc(m.resolvedAt)}`}\n${m.message}`;
}

export function ReplayBar() {
  const { client, status } = useReplay();
  // The scrubber's own position while dragging, so the cursor does not jump back under the pointer.
  const [drag, setDrag] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [speed, setSpeed] = useState<number | null>(null);
  // A range being marked for saving: drawn on the track as soon as one end is set.
  const [marking, setMarking] = useState<{ from: number | null; to: number | null }>({ from: null, to: null });
  if (client === null || status === null) return null;
  const chosen = speed ?? status.speed;
  const span = Math.max(1, status.to - status.from);
  const pct = (t: number) => `${((Math.min(status.to, Math.max(status.from, t)) - status.from) / span) * 100}%`;
  const run = (p: Promise<void>) => p.then(() => setError(null), (err: unknown) => setError(errorText(err)));
  const seek = (t: number) => run(client.seek(t));
  const next = client.nextAlertAt();
  const nextMarks = next === null ? [] : status.marks.filter((m) => m.at === next);
  const here = status.marks.filter((m) => m.at === status.cursor);
  const pending = marking.from !== null || marking.to !== null ? { from: marking.from ?? status.from, to: marking.to ?? status.cursor } : null;
  const shown = drag ?? status.cursor;
  // The scrubber moves in 100 ms steps from the start: its last step can fall short of the end.
  const scrubbedTo = (input: HTMLInputElement) => {
    const v = Number(input.value);
    return status.to - v < SCRUB_STEP_MS ? status.to : v;
  };
  return (
    <section className="replay" data-testid="replay-bar" aria-label="Replay">
      <div className="banner banner-replay" role="status" data-testid="replay-banner">
        <strong>Replay</strong>
        <span>
          {" "}
          of <span data-testid="replay-name">{status.name}</span>: what the live dashboard showed at{" "}
          <strong data-testid="replay-cursor">{fmtUtc(shown)}</strong>. Nothing here is live.
        </span>
      </div>
      {status.message !== undefined && (
        <div className="banner banner-warn" role="alert" data-testid="replay-message">
          <strong>This recording is damaged or cut short.</strong> <span>Loading {status.message}.</span>
        </div>
      )}
      <div className="replay-controls">
        <button
          className="btn replay-play"
          data-testid="replay-play"
          onClick={() => run(status.playing ? client.pause() : client.play(chosen))}
          aria-label={status.playing ? "Pause" : "Play"}
        >
          {status.playing ? "Pause" : "Play"}
        </button>
        <select
          className="btn select-btn replay-speed"
          data-testid="replay-speed"
          aria-label="Speed"
          value={chosen}
          onChange={(e) => {
            const v = Number(e.target.value);
            setSpeed(v);
            if (status.playing) void run(client.play(v));
          }}
        >
          {REPLAY_SPEEDS.map((s) => (
            <option key={s} value={s}>
              {s}×
            </option>
          ))}
        </select>
        <button
          className="btn replay-next"
          data-testid="replay-next-alert"
          disabled={next === null}
          title={nextMarks.map(markTitle).join("\n\n")}
          onClick={() => next !== null && seek(next)}
        >
          <span className="replay-next-name">{nextMarks.length === 0 ? "No later alert" : `Next: ${markName(nextMarks[0])}${nextMarks.length > 1 ? ` +${nextMarks.length - 1}` : ""}`}</span>
        </button>
        <div className="replay-timeline">
          <div className="replay-track" aria-hidden="true">
            {status.range !== undefined && (
              <span className="replay-range" style={{ left: pct(status.range.from), width: `calc(${pct(status.range.to)} - ${pct(status.range.from)})` }} />
            )}
            {pending !== null && (
              <span className="replay-range replay-range-pending" data-testid="replay-pending-range" style={{ left: pct(pending.from), width: `calc(${pct(pending.to)} - ${pct(pending.from)})` }} />
            )}
            {status.marks.map((m) => (
              <button
                key={m.id}
                className={`replay-mark mark-${m.severity}`}
                style={{ left: pct(m.at) }}
                title={markTitle(m)}
                data-testid="replay-mark"
                data-rule={m.rule}
                onClick={() => seek(m.at)}
                tabIndex={-1}
              />
            ))}
          </div>
          <input
            type="range"
            className="replay-scrubber"
            data-testid="replay-scrubber"
            aria-label="Time cursor"
            min={status.from}
            max={status.to}
            step={SCRUB_STEP_MS}
            value={shown}
            onChange={(e) => setDrag(Number(e.target.value))}
            onPointerUp={(e) => {
              setDrag(null);
              void seek(scrubbedTo(e.target as HTMLInputElement));
            }}
            onKeyUp={(e) => {
              setDrag(null);
              void seek(scrubbedTo(e.target as HTMLInputElement));
            }}
          />
          <div className="replay-ends">
            <span>{fmtUtc(status.from)}</span>
            <span>
              {status.marks.length} alert{status.marks.length === 1 ? "" : "s"}
            </span>
            <span>{fmtUtc(status.to)}</span>
          </div>
        </div>
      </div>
      {here.length > 0 && (
        <div className="replay-here small" data-testid="replay-here">
          Here: {here.map((m) => `${markName(m)}, raised ${fmtUtc(m.raisedAt)}`).join("; ")}
        </div>
      )}
      {status.saveTo !== undefined && <SaveRange client={client} status={status} marking={marking} onMark={setMarking} />}
      {error !== null && (
        <div className="banner banner-error" role="alert">
          {error}
        </div>
      )}
    </section>
  );
}

/** Save a named range of the recording: its start and end marked at the cursor. */
interface Marking {
  from: number | null;
  to: number | null;
}

function SaveRange({ client, status, marking, onMark }: { client: ReplayClient; status: ReplayStatus; marking: Marking; onMark: (m: Marking) => void }) {
  const { from, to } = marking;
  const setFrom = (t: number) => onMark({ ...marking, from: t });
  const setTo = (t: number) => onMark({ ...marking, to: t });
  const [name, setName] = useState("");
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);
  const start = from ?? status.from;
  const end = to ?? status.cursor;
  const save = () =>
    client.save(name, start, end).then(
      (file) => setResult({ ok: true, text: `Saved ${file}` }),
      (err: unknown) => setResult({ ok: false, text: errorText(err) }),
    );
  return (
    <div className="replay-save" data-testid="replay-save">
      <button className="btn btn-sm" data-testid="replay-mark-from" onClick={() => setFrom(status.cursor)}>
        Range starts here
      </button>
      <button className="btn btn-sm" data-testid="replay-mark-to" onClick={() => setTo(status.cursor)}>
        Range ends here
      </button>
      <span className="small">
        {fmtUtc(start)} → {fmtUtc(end)}
      </span>
      <input className="replay-name" data-testid="replay-save-name" placeholder="Name" value={name} onChange={(e) => setName(e.target.value)} aria-label="Name of the saved recording" />
      <button className="btn btn-sm" data-testid="replay-save-button" disabled={name.trim() === "" || start > end} onClick={() => void save()}>
        Save range
      </button>
      {result !== null && (
        <span className={result.ok ? "small" : "small error"} data-testid="replay-save-result">
          {result.text}
        </span>
      )}
    </div>
  );
}
