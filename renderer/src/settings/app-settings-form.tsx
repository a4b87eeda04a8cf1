// The app's own settings (settings.json) beside the token: the local hub's port, notifications,
// the built-in demo, recording, alert forwarding and remote hubs. Main checks every save against the settings
// rules and answers with each bad field by its path; the form shows that message at the field.
import { useEffect, useState, type ReactNode } from "react";
import type { AlertRule } from "../../../shared/protocol/types.js";
import type { RemoteHub, SemscopeBridge, Settings, SettingsView } from "../../../shared/ipc/ipc-contract.js";
import { RULE_LABEL } from "../logic/alert-target.js";
import { errorText } from "../logic/error-text.js";

const MIB = 1024 * 1024;
const RULES = Object.keys(RULE_LABEL) as AlertRule[];

/** What the inputs hold: text stays text until saved, so a half-typed number is not lost. */
interface Draft {
  port: string;
  notify: boolean;
  minSeverity: "warning" | "critical";
  silent: boolean;
  muted: AlertRule[];
  runDemo: boolean;
  recording: boolean;
  capMiB: string;
  alertmanager: string;
  webhooks: string;
  remotes: RemoteHub[];
}

function draftOf(s: Settings): Draft {
  return {
    port: String(s.hub.port),
    notify: s.notifications.enabled,
    minSeverity: s.notifications.minSeverity,
    silent: s.notifications.silent,
    muted: [...s.notifications.mutedRules],
    runDemo: s.runDemo,
    recording: s.recording.enabled,
    capMiB: String(Math.round(s.recording.capBytes / MIB)),
    alertmanager: s.alertForwarding.alertmanager.join("\n"),
    webhooks: s.alertForwarding.webhooks.join("\n"),
    remotes: s.remoteHubs.map((h) => ({ ...h })),
  };
}

/** An id for a new remote hub from its name ([a-z0-9-], as the settings rules ask), unlike `taken`. */
function remoteId(name: string, taken: readonly RemoteHub[]): string {
  const base =
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 24) || "hub";
  let id = base;
  for (let n = 2; taken.some((h) => h.id === id); n++) id = `${base}-${n}`;
  return id;
}

/** A whole number typed in a field, or the reason it is not one. */
function wholeNumber(text: string): number | string {
  const t = text.trim();
  return /^\d+$/.test(t) ? Number(t) : "must be a whole number";
}

const lines = (text: string) =>
  text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");

/** The draft over `base` (the settings as main has them now), or the fields that cannot be read. */
function applyDraft(base: Settings, d: Draft): { settings: Settings } | { errors: Record<string, string> } {
  const port = wholeNumber(d.port);
  const cap = wholeNumber(d.capMiB);
  const errors: Record<string, string> = {};
  if (typeof port === "string") errors["hub.port"] = port;
  if (typeof cap === "string") errors["recording.capBytes"] = cap;
  if (typeof port === "string" || typeof cap === "string") return { errors };
  return {
    settings: {
      ...base,
      hub: { ...base.hub, port },
      notifications: { enabled: d.notify, minSeverity: d.minSeverity, silent: d.silent, mutedRules: d.muted },
      runDemo: d.runDemo,
      recording: { enabled: d.recording, capBytes: cap * MIB },
      alertForwarding: { alertmanager: lines(d.alertmanager), webhooks: lines(d.webhooks) },
      remoteHubs: d.remotes,
      // The form shows on the local hub's page only, where no remote hub is active; a removed one cannot stay named.
      activeRemoteId: d.remotes.some((h) => h.id === base.activeRemoteId) ? base.activeRemoteId : null,
    },
  };
}

/** The settings paths the form shows an error at, most specific first. */
const FIELD_KEYS = ["hub.port", "notifications", "recording.capBytes", "recording", "alertForwarding.alertmanager", "alertForwarding.webhooks", "remoteHubs"] as const;

/** Main's "hub.port: must be …; alertForwarding.webhooks[0]: …" split by the form field each names; the rest under "form". */
function errorsByField(message: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of message.split("; ")) {
    const path = /^([\w.[\]]+): /.exec(part)?.[1] ?? "";
    const key = FIELD_KEYS.find((k) => path === k || path.startsWith(`${k}.`) || path.startsWith(`${k}[`)) ?? "form";
    const text = key === path ? part.slice(path.length + 2) : part;
    out[key] = out[key] === undefined ? text : `${out[key]}; ${text}`;
  }
  return out;
}

type Status = { kind: "idle" } | { kind: "saving" } | { kind: "saved"; reconnecting: boolean } | { kind: "refused"; errors: Record<string, string> };

export function AppSettingsForm({ bridge }: { bridge: SemscopeBridge }) {
  const [view, setView] = useState<SettingsView | null>(null);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [status, setStatus] = useState<Status>({ kind: "idle" });
  const [loadError, setLoadError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    bridge.getSettings().then(
      (v) => {
        if (!live) return;
        setView(v);
        setDraft(draftOf(v.settings));
      },
      (err: unknown) => live && setLoadError(errorText(err)),
    );
    return () => {
      live = false;
    };
  }, [bridge]);

  if (loadError !== null) {
    return (
      <p className="settings-error" role="alert">
        The app's settings could not be read: {loadError}
      </p>
    );
  }
  if (view === null || draft === null) return null;
  const errors = status.kind === "refused" ? status.errors : {};
  const set = (change: Partial<Draft>) => {
    setDraft({ ...draft, ...change });
    if (status.kind === "saved") setStatus({ kind: "idle" });
  };
  const save = async () => {
    setStatus({ kind: "saving" });
    try {
      // The latest settings under the edit: a threshold set in the rules panel meanwhile stays.
      const fresh = await bridge.getSettings();
      const next = applyDraft(fresh.settings, draft);
      if ("errors" in next) return setStatus({ kind: "refused", errors: next.errors });
      const r = await bridge.saveSettings(next.settings);
      if (!r.ok) return setStatus({ kind: "refused", errors: errorsByField(r.error) });
      setView({ ...fresh, settings: r.settings });
      setDraft(draftOf(r.settings));
      setStatus({ kind: "saved", reconnecting: r.reconnecting });
    } catch (err) {
      setStatus({ kind: "refused", errors: { form: errorText(err) } });
    }
  };
  const dirty = JSON.stringify(draft) !== JSON.stringify(draftOf(view.settings));

  return (
    <>
      {view.problem !== null && (
        <section className="card settings-section settings-problem" role="alert" data-testid="settings-problem">
          <h3>Settings file</h3>
          <p>{view.problem}</p>
        </section>
      )}
      <section className="card settings-section" data-testid="app-settings">
        <h3>App settings</h3>
        <form
          className="settings-form"
          onSubmit={(e) => {
            e.preventDefault();
            void save();
          }}
        >
          <Field label="Local hub port" error={errors["hub.port"]} hint="Agents on this machine connect to 127.0.0.1 on this port; a change restarts the hub.">
            <input id="set-hub.port" className="mono" inputMode="numeric" value={draft.port} onChange={(e) => set({ port: e.target.value })} data-testid="set-port" />
          </Field>

          <fieldset>
            <legend>Notifications</legend>
            <Check label="Show notifications for new alerts" checked={draft.notify} onChange={(notify) => set({ notify })} testId="set-notify" />
            <Field label="Notify" error={errors.notifications}>
              <select id="set-notifications" value={draft.minSeverity} onChange={(e) => set({ minSeverity: e.target.value as Draft["minSeverity"] })} data-testid="set-min-severity">
                <option value="critical">critical alerts only</option>
                <option value="warning">warnings and critical alerts</option>
              </select>
            </Field>
            <Check label="Without sound" checked={draft.silent} onChange={(silent) => set({ silent })} testId="set-silent" />
            <div className="settings-muted" data-testid="set-muted">
              <span className="small muted">Never notify:</span>
              {RULES.map((rule) => (
                <Check
                  key={rule}
                  label={RULE_LABEL[rule]}
                  checked={draft.muted.includes(rule)}
                  onChange={(on) => set({ muted: on ? [...draft.muted, rule] : draft.muted.filter((r) => r !== rule) })}
                  testId={`set-mute-${rule}`}
                />
              ))}
            </div>
          </fieldset>

          <fieldset>
            <legend>Local hub</legend>
            <Check label="Run the demo service against the local hub" checked={draft.runDemo} onChange={(runDemo) => set({ runDemo })} testId="set-demo" />
            <Check label="Record the local hub (rolling files in the app's folder)" checked={draft.recording} onChange={(recording) => set({ recording })} testId="set-recording" />
            <Field label="Keep recordings up to (MiB)" error={errors["recording.capBytes"] ?? errors.recording} hint="At least 16 MiB; the oldest file goes first.">
              <input id="set-recording" className="mono" inputMode="numeric" value={draft.capMiB} onChange={(e) => set({ capMiB: e.target.value })} data-testid="set-cap" />
            </Field>
          </fieldset>

          <fieldset>
            <legend>Alert forwarding</legend>
            <Field label="Alertmanager URLs (one a line)" error={errors["alertForwarding.alertmanager"]}>
              <textarea id="set-alertForwarding.alertmanager" className="mono" rows={2} value={draft.alertmanager} onChange={(e) => set({ alertmanager: e.target.value })} data-testid="set-alertmanager" />
            </Field>
            <Field label="Webhook URLs (one a line)" error={errors["alertForwarding.webhooks"] ?? errors.alertForwarding}>
              <textarea id="set-alertForwarding.webhooks" className="mono" rows={2} value={draft.webhooks} onChange={(e) => set({ webhooks: e.target.value })} data-testid="set-webhooks" />
            </Field>
          </fieldset>

          <fieldset data-testid="set-remotes">
            <legend>Remote hubs (the Hub menu switches the window to one)</legend>
            {draft.remotes.map((h, i) => (
              <div key={h.id} className="settings-remote" data-testid="set-remote">
                <span>{h.name}</span>
                <code>{h.url}</code>
                <span className="small muted">{h.token === null ? "no token" : "with a token"}</span>
                <button type="button" className="btn btn-xs" onClick={() => set({ remotes: draft.remotes.filter((_, j) => j !== i) })} data-testid="set-remote-remove">
                  Remove
                </button>
              </div>
            ))}
            <AddRemote onAdd={(h) => set({ remotes: [...draft.remotes, { ...h, id: remoteId(h.name, draft.remotes) }] })} />
            {errors.remoteHubs !== undefined && (
              <span className="settings-error small" role="alert" data-testid="field-error">
                {errors.remoteHubs}
              </span>
            )}
          </fieldset>

          <div className="settings-actions">
            <button type="submit" className="btn btn-primary btn-sm" disabled={!dirty || status.kind === "saving"} data-testid="settings-save">
              {status.kind === "saving" ? "Saving…" : "Save"}
            </button>
            <button type="button" className="btn btn-sm" disabled={!dirty || status.kind === "saving"} onClick={() => (setDraft(draftOf(view.settings)), setStatus({ kind: "idle" }))}>
              Undo changes
            </button>
            {status.kind === "saved" && (
              <span className="small" role="status" data-testid="settings-saved">
                {status.reconnecting ? "Saved: the local hub restarts with them and this window reloads." : "Saved."}
              </span>
            )}
            {status.kind === "refused" && (
              <span className="settings-error" role="alert" data-testid="settings-refused">
                Not saved: {errors.form ?? "correct the fields marked above"}
              </span>
            )}
          </div>
        </form>
      </section>
    </>
  );
}

function Field({ label, error, hint, children }: { label: string; error?: string; hint?: string; children: ReactNode }) {
  return (
    <label className="settings-field">
      <span>{label}</span>
      {children}
      {hint !== undefined && <span className="small muted">{hint}</span>}
      {error !== undefined && (
        <span className="settings-error small" role="alert" data-testid="field-error">
          {error}
        </span>
      )}
    </label>
  );
}

function Check({ label, checked, onChange, testId }: { label: string; checked: boolean; onChange: (on: boolean) => void; testId: string }) {
  return (
    <label className="settings-check">
      <input type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} data-testid={testId} />
      {label}
    </label>
  );
}

/** A new remote hub's name, URL and token; main checks the URL (https, or http on loopback) on Save. */
function AddRemote({ onAdd }: { onAdd: (h: Omit<RemoteHub, "id">) => void }) {
  const [name, setName] = useState("");
  const [url, setUrl] = useState("");
  const [token, setToken] = useState("");
  const add = () => {
    onAdd({ name: name.trim(), url: url.trim(), token: token.trim() === "" ? null : token.trim() });
    setName("");
    setUrl("");
    setToken("");
  };
  return (
    <div className="settings-remote-add">
      <input placeholder="Name" aria-label="Remote hub name" value={name} onChange={(e) => setName(e.target.value)} data-testid="set-remote-name" />
      <input placeholder="https://hub.example.com:7420" aria-label="Remote hub URL" className="mono" value={url} onChange={(e) => setUrl(e.target.value)} data-testid="set-remote-url" />
      <input placeholder="Token (none if empty)" aria-label="Remote hub token" type="password" className="mono" value={token} onChange={(e) => setToken(e.target.value)} data-testid="set-remote-token" />
      <button type="button" className="btn btn-xs" disabled={name.trim() === "" || url.trim() === ""} onClick={add} data-testid="set-remote-add">
        Add
      </button>
    </div>
  );
}
