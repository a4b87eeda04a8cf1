// The hub wants a token and this page has none (or a wrong one): ask for it. The token goes
// only into the socket.io handshake (auth.token) and this tab's storage, or this browser's
// when "remember" is ticked.
import { useState, type FormEvent } from "react";
import { storeToken } from "../data/hub-target.js";
import { useApp, useChannel } from "./context.js";

export function TokenForm() {
  const { store, client, target } = useApp();
  useChannel("connection");
  const [token, setToken] = useState("");
  const [remember, setRemember] = useState(false);
  const hadToken = store.connection.hasToken;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const t = token.trim();
    if (t === "") return;
    storeToken(t, remember);
    client.reconnectWith(t);
  };

  return (
    <div className="center-card">
      <form className="card token-card" onSubmit={submit} data-testid="token-form">
        <h2>This hub needs a token</h2>
        <p className="muted">
          {hadToken ? "The token this dashboard presented was refused by " : "Enter the token the hub was started with ("}
          {hadToken ? <code>{store.connection.url}</code> : <code>--token</code>}
          {hadToken ? "." : " or SEMSCOPE_TOKEN)."} You can also open the dashboard with <code>?token=…</code> in its address.
        </p>
        {target.bridged && <p className="muted">In the app, the token is set in Settings → Hub.</p>}
        <label className="field">
          <span>Token</span>
          <input type="password" autoFocus autoComplete="off" spellCheck={false} value={token} onChange={(e) => setToken(e.target.value)} />
        </label>
        <label className="check">
          <input type="checkbox" checked={remember} onChange={(e) => setRemember(e.target.checked)} /> Remember on this browser
        </label>
        <div className="actions">
          <button className="btn btn-primary" type="submit" disabled={token.trim() === ""}>
            Connect
          </button>
        </div>
      </form>
    </div>
  );
}
