/** Client-side navigation on the History API (routes are matched in routes.ts). */
import { type AnchorHTMLAttributes, type MouseEvent, useSyncExternalStore } from "react";

export { compareHref, matchRoute, type Route, sessionHref } from "./routes.js";

const NAVIGATE = "agent-lab:navigate";

/**
 * Where the page stood when the user left it by a link, kept in its history entry: Back scrolls
 * there again and focuses the link that was followed (the browser's own restoration runs before
 * the page has drawn its rows, and ends at the top).
 */
interface LeftAt {
  scroll_y: number;
  /** The href of the link followed from this page. */
  followed: string | null;
}

let lastNavigation: "load" | "push" | "replace" | "pop" = "load";

/**
 * Whether the page now shown was reached by Back or Forward: a list may then show the pages it
 * had read (`usePagedList`) rather than start again from its first.
 */
export const cameBack = (): boolean => lastNavigation === "pop";

if (typeof window !== "undefined") {
  window.history.scrollRestoration = "manual";
  window.addEventListener("popstate", (event) => {
    lastNavigation = "pop";
    const left = leftAt(event.state);
    if (left !== null) returnTo(left);
  });
}

/** How long Back waits for a page's content (a report read anew) before it gives up. */
const RETURN_WAIT_MS = 3_000;

/**
 * Scrolls back and focuses the followed link once the page has drawn them: at once for a list
 * kept in memory, after its read for a page that reads again. A user who scrolls, clicks or types
 * meanwhile has moved on, and is not moved.
 */
function returnTo(left: LeftAt): void {
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
    if (moved) return done();
    const room = document.documentElement.scrollHeight - window.innerHeight;
    const link =
      left.followed === null
        ? null
        : document.querySelector(`a[href="${CSS.escape(left.followed)}"]`);
    const drawn = room >= left.scroll_y && (left.followed === null || link !== null);
    if (!drawn && performance.now() < until) {
      requestAnimationFrame(attempt);
      return;
    }
    done();
    window.scrollTo(0, left.scroll_y);
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
  if (options.replace) window.history.replaceState(null, "", to);
  else {
    const left: LeftAt = { scroll_y: window.scrollY, followed: options.followed ?? null };
    window.history.replaceState({ left_at: left }, "");
    window.history.pushState(null, "", to);
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
