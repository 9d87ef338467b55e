import { tokenRefused } from "../access.js";

/**
 * What a browser without the token cookie sees (the server answered 401): how to get in, rather
 * than empty pages. The form sends `?token=…` to this address, which the server trades for the
 * cookie, as it does the address `serve` prints.
 */
export function TokenPage() {
  return (
    <div className="page token-page" data-testid="token-page">
      <div className="card token-card">
        <h1>This lab needs its access token</h1>
        {tokenRefused ? (
          <p className="notice notice-error" role="alert" data-testid="token-refused">
            The token in the address you opened is not this server's. A token the server made
            changes each time it starts: use the address it printed last.
          </p>
        ) : null}
        <p>
          Open the address that <code>agent-lab serve</code> (or <code>npm start</code>) printed
          when it started; it ends in <code>?token=…</code>. This browser then keeps the token in a
          cookie until it closes.
        </p>
        <form className="token-form" method="get" action={window.location.pathname}>
          <div className="field">
            <label htmlFor="access-token">Or paste the token</label>
            <input
              id="access-token"
              name="token"
              type="password"
              autoComplete="off"
              spellCheck={false}
              required
              data-testid="token-input"
            />
          </div>
          <button type="submit" className="button button-primary" data-testid="token-submit">
            Open the lab
          </button>
        </form>
        <p className="muted small token-note">
          The token keeps other users and programs on this machine away from your sessions and your
          API keys. To run without one on 127.0.0.1, start the server with{" "}
          <code>agent-lab serve --no-token</code>.
        </p>
      </div>
    </div>
  );
}
