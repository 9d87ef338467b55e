import { useEffect } from "react";
import { useAccessDenied } from "./access.js";
import { api } from "./api.js";
import { ComparePage } from "./pages/compare-page.js";
import { ExperimentPage } from "./pages/experiment-page.js";
import { ExperimentsPage } from "./pages/experiments-page.js";
import { SessionPage } from "./pages/session-page.js";
import { SessionsPage } from "./pages/sessions-page.js";
import { TokenPage } from "./pages/token-page.js";
import { Link, matchRoute, useLocation } from "./router.js";

const TITLES = {
  sessions: "Sessions",
  session: "Session",
  compare: "Compare",
  experiments: "Experiments",
  experiment: "Experiment",
  not_found: "Not found",
} as const;

export function App() {
  const { pathname, search } = useLocation();
  const route = matchRoute(pathname, search);
  const denied = useAccessDenied();

  useEffect(() => {
    document.title = `${denied ? "Access token needed" : TITLES[route.name]} · Agent Lab`;
  }, [route.name, denied]);

  // Not every page asks the API for something at once; this does, so a 401 shows straight away.
  useEffect(() => {
    api.health().catch(() => undefined);
  }, []);

  if (denied) {
    return (
      <div className="app">
        <header className="topbar">
          <span className="brand">Agent Lab</span>
        </header>
        <main id="main" className="main">
          <TokenPage />
        </main>
      </div>
    );
  }

  return (
    <div className="app">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/" className="brand">
          Agent Lab
        </Link>
        <nav aria-label="Main">
          <Link to="/" aria-current={route.name === "sessions" ? "page" : undefined}>
            Sessions
          </Link>
          <Link
            to="/experiments"
            data-testid="nav-experiments"
            aria-current={route.name === "experiments" ? "page" : undefined}
          >
            Experiments
          </Link>
          <Link to="/compare" aria-current={route.name === "compare" ? "page" : undefined}>
            Compare
          </Link>
        </nav>
      </header>
      <main id="main" className="main">
        {route.name === "sessions" ? <SessionsPage /> : null}
        {route.name === "session" ? <SessionPage key={route.id} id={route.id} /> : null}
        {route.name === "compare" ? <ComparePage a={route.a} b={route.b} /> : null}
        {route.name === "experiments" ? <ExperimentsPage /> : null}
        {route.name === "experiment" ? (
          <ExperimentPage
            key={route.id}
            id={route.id}
            cell={route.cell}
            compare={route.compare}
            scenario={route.scenario}
          />
        ) : null}
        {route.name === "not_found" ? (
          <div className="page">
            <h1>Page not found</h1>
            <p>
              Nothing lives at <code>{route.path}</code>. <Link to="/">Back to the sessions</Link>
            </p>
          </div>
        ) : null}
      </main>
    </div>
  );
}
