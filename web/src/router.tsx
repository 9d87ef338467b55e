/** Client-side navigation on the History API (routes are matched in routes.ts). */
import { type AnchorHTMLAttributes, type MouseEvent, useSyncExternalStore } from "react";

export { compareHref, matchRoute, type Route, sessionHref } from "./routes.js";

const NAVIGATE = "agent-lab:navigate";

/**
 * Where a page stood when the user left it: its scroll and, when left by a link, that link's
 * href. Back or Forward scrolls there again and focuses the link (the browser's own restoration
 * runs before the page has drawn its rows, and ends at the top).
 */
interface LeftAt {
  scroll_y: number;
  followed: string | null;
}

let lastNavigation: "load" | "push" | "replace" | "pop" = "load";

/**
 * Whether the page now shown was reached by Back or Forward: a list may then show the pages it
 * had read (`usePagedList`) rather than start again from its first.
 */
export const cameBack = (): boolean => lastNavigation === "pop";

/** Each history entry of the tab is named in its state, so Back and Forward know where it stood. */
let currentEntry = "";
/** Where each entry stood when it was left: by a link, by Back or Forward. */
const positions = new Map<string, LeftAt>();
/** Moves on at each navigation: a return still waiting for its page gives way to the next one. */
let generation = 0;

/** How long Back waits for a page's content (a report read anew) before it gives up. */
const RETURN_WAIT_MS = 3_000;

const newEntry = () => Math.random().toString(36).slice(2);

/** Where the page stood when it was last unloaded, and which history entry it was. */
const UNLOADED = "agent-lab:unloaded-at";
const UNLOADED_ENTRY = "agent-lab:unloaded-entry";

function readJson(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function entryOf(state: unknown): string | null {
  const entry =
    typeof state === "object" && state !== null ? (state as { entry?: unknown }).entry : undefined;
  return typeof entry === "string" ? entry : null;
}

if (typeof window !== "undefined") {
  window.history.scrollRestoration = "manual";
  currentEntry = entryOf(window.history.state) ?? newEntry();
  window.history.replaceState({ entry: currentEntry }, "");
  // A reload keeps the entry (its state) and the tab's session storage, where the page put its
  // scroll as it was unloaded (a history write at that moment is dropped): it returns there.
  const reloaded = leftAt({ left_at: readJson(sessionStorage.getItem(UNLOADED)) });
  sessionStorage.removeItem(UNLOADED);
  if (reloaded !== null && sessionStorage.getItem(UNLOADED_ENTRY) === currentEntry) {
    returnTo(reloaded);
  }
  window.addEventListener("pagehide", () => {
    const left: LeftAt = { scroll_y: window.scrollY, followed: null };
    sessionStorage.setItem(UNLOADED, JSON.stringify(left));
    sessionStorage.setItem(UNLOADED_ENTRY, currentEntry);
  });
  window.addEventListener("popstate", (event) => {
    // The page left is still the one drawn: its scroll is where it stood. Left by Forward after
    // a Back to it, the link it was first left by is still the one to come back to.
    const followed = positions.get(currentEntry)?.followed ?? null;
    positions.set(currentEntry, { scroll_y: window.scrollY, followed });
    lastNavigation = "pop";
    generation += 1;
    const entry = entryOf(event.state);
    currentEntry = entry ?? newEntry();
    if (entry === null) window.history.replaceState({ entry: currentEntry }, "");
    const left = positions.get(currentEntry) ?? leftAt(event.state);
    if (left === null) window.scrollTo(0, 0);
    else returnTo(left);
  });
}

/**
 * Scrolls back and focuses the followed link once the page has drawn them: at once for a list
 * kept in memory, after its read for a page that reads again. A user who scrolls, clicks or types
 * meanwhile has moved on, and is not moved; nor is one whose page never grew that long.
 */
function returnTo(left: LeftAt): void {
  const mine = generation;
  const until = performance.now() + RETURN_WAIT_MS;
  let moved = false;
  const stop = () => {
    moved = true;
  };
  const inputs = ["wheel", "keydown", "pointerdown", "touchstart"] as const;
  for (const input of inputs) window.addEventListener(input, stop, { once: true, passive: true });
  const done = () => {
    for (const input of inputs) window.removeEventListener(input, stop);
  };
  const attempt = () => {
    if (moved || generation !== mine) return done();
    const room = document.documentElement.scrollHeight - window.innerHeight;
    const link =
      left.followed === null
        ? null
        : document.querySelector(`a[href="${CSS.escape(left.followed)}"]`);
    const tall = room >= left.scroll_y;
    if (!(tall && (left.followed === null || link !== null)) && performance.now() < until) {
      requestAnimationFrame(attempt);
      return;
    }
    done();
    if (tall) window.scrollTo(0, left.scroll_y);
    if (link instanceof HTMLElement) link.focus({ preventScroll: true });
  };
  // A frame first: the popstate's render is committed, then laid out.
  requestAnimationFrame(attempt);
}

function leftAt(state: unknown): LeftAt | null {
  if (typeof state !== "object" || state === null || !("left_at" in state)) return null;
  const left = (state as { left_at: unknown }).left_at;
  if (typeof left !== "object" || left === null) return null;
  const { scroll_y, followed } = left as Partial<LeftAt>;
  return typeof scroll_y === "number"
    ? { scroll_y, followed: typeof followed === "string" ? followed : null }
    : null;
}

function subscribe(onChange: () => void): () => void {
  window.addEventListener("popstate", onChange);
  window.addEventListener(NAVIGATE, onChange);
  return () => {
    window.removeEventListener("popstate", onChange);
    window.removeEventListener(NAVIGATE, onChange);
  };
}

const currentLocation = () => `${window.location.pathname}${window.location.search}`;

export function useLocation(): { pathname: string; search: string } {
  const href = useSyncExternalStore(subscribe, currentLocation, () => "/");
  const url = new URL(href, "http://local");
  return { pathname: url.pathname, search: url.search };
}

export function navigate(
  to: string,
  options: { replace?: boolean; followed?: string | undefined } = {},
): void {
  if (to === currentLocation()) return;
  lastNavigation = options.replace ? "replace" : "push";
  generation += 1;
  if (options.replace) window.history.replaceState({ entry: currentEntry }, "", to);
  else {
    const left: LeftAt = { scroll_y: window.scrollY, followed: options.followed ?? null };
    positions.set(currentEntry, left);
    window.history.replaceState({ entry: currentEntry, left_at: left }, "");
    currentEntry = newEntry();
    window.history.pushState({ entry: currentEntry }, "", to);
  }
  window.dispatchEvent(new Event(NAVIGATE));
  if (!options.replace) window.scrollTo(0, 0);
}

type LinkProps = AnchorHTMLAttributes<HTMLAnchorElement> & { to: string };

/** An ordinary link (open in a new tab works) that navigates in place on a plain click. */
export function Link({ to, onClick, children, ...rest }: LinkProps) {
  const handleClick = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (
      event.defaultPrevented ||
      event.button !== 0 ||
      event.metaKey ||
      event.ctrlKey ||
      event.shiftKey ||
      event.altKey
    ) {
      return;
    }
    event.preventDefault();
    navigate(to, { followed: to });
  };
  return (
    <a href={to} onClick={handleClick} {...rest}>
      {children}
    </a>
  );
}
