/**
 * The UI's pages by path: `/`, `/sessions/:id`, `/compare?a=ID&b=ID`, `/experiments` and
 * `/experiments/:id?cell=CELL&compare=CELL&compare=CELL&scenario=ID`. Pure, tested without a browser.
 */

export type Route =
  | { name: "sessions" }
  | { name: "session"; id: string }
  | { name: "compare"; a: string | null; b: string | null }
  | { name: "experiments" }
  | {
      name: "experiment";
      id: string;
      /** The cell whose runs are open. */
      cell: string | null;
      /** Up to two cells compared side by side. */
      compare: string[];
      /** The scenario whose runs are shown side by side across the cells. */
      scenario: string | null;
    }
  | { name: "not_found"; path: string };

/** The page a location shows. Pure, so it is tested without a browser. */
export function matchRoute(pathname: string, search: string): Route {
  const path = pathname.replace(/\/+$/, "") || "/";
  if (path === "/") return { name: "sessions" };
  const session = /^\/sessions\/([^/]+)$/.exec(path);
  if (session?.[1]) {
    try {
      return { name: "session", id: decodeURIComponent(session[1]) };
    } catch {
      return { name: "not_found", path: pathname };
    }
  }
  if (path === "/experiments") return { name: "experiments" };
  const experiment = /^\/experiments\/([^/]+)$/.exec(path);
  if (experiment?.[1]) {
    try {
      const params = new URLSearchParams(search);
      return {
        name: "experiment",
        id: decodeURIComponent(experiment[1]),
        cell: params.get("cell") || null,
        compare: [...new Set(params.getAll("compare").filter(Boolean))].slice(-2),
        scenario: params.get("scenario") || null,
      };
    } catch {
      return { name: "not_found", path: pathname };
    }
  }
  if (path === "/compare") {
    const params = new URLSearchParams(search);
    return { name: "compare", a: params.get("a") || null, b: params.get("b") || null };
  }
  return { name: "not_found", path: pathname };
}

export const sessionHref = (id: string) => `/sessions/${encodeURIComponent(id)}`;

export function compareHref(a: string | null, b: string | null): string {
  const params = new URLSearchParams();
  if (a) params.set("a", a);
  if (b) params.set("b", b);
  const query = params.toString();
  return query ? `/compare?${query}` : "/compare";
}

/** The view of an experiment's page the address keeps. */
export interface ExperimentView {
  cell?: string | null;
  compare?: readonly string[];
  scenario?: string | null;
}

/**
 * An experiment's page, with the cell whose runs are open, the cells compared and the scenario
 * shown side by side.
 */
export function experimentHref(id: string, view: ExperimentView = {}): string {
  const params = new URLSearchParams();
  if (view.cell) params.set("cell", view.cell);
  for (const cell of view.compare ?? []) params.append("compare", cell);
  if (view.scenario) params.set("scenario", view.scenario);
  const query = params.toString();
  return `/experiments/${encodeURIComponent(id)}${query ? `?${query}` : ""}`;
}
