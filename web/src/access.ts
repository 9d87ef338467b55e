/**
 * Whether the server let this browser in. The server trades `?token=…` on a page address for an
 * HttpOnly cookie and redirects to the address without it, so the UI never sees a good token:
 * a `token` still in the address is one the server refused.
 */
import { useSyncExternalStore } from "react";

function takeRefusedToken(): boolean {
  // Outside a browser (the API client under test in Node) there is no address to read.
  if (typeof window === "undefined") return false;
  const url = new URL(window.location.href);
  if (!url.searchParams.has("token")) return false;
  url.searchParams.delete("token");
  // Out of the address bar and the history, like a good one.
  history.replaceState(history.state, "", url.pathname + url.search + url.hash);
  return true;
}

/** True when the page was opened with a token the server did not accept. */
export const tokenRefused = takeRefusedToken();

let denied = false;
const listeners = new Set<() => void>();

/** An API answer was 401: the app shows how to get in instead of empty pages. */
export function reportUnauthorized(): void {
  if (denied) return;
  denied = true;
  for (const listener of listeners) listener();
}

export function useAccessDenied(): boolean {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => denied,
  );
}
