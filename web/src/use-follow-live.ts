import { useCallback, useEffect, useRef, useState } from "react";

/** Scrolling up by more than this from the bottom stops following; back within it resumes. */
const AWAY_PX = 48;

const fromBottom = () =>
  document.documentElement.scrollHeight - (window.scrollY + window.innerHeight);

const isTyping = (target: EventTarget | null) =>
  target instanceof HTMLElement &&
  (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));

const toBottom = () => window.scrollTo({ top: document.documentElement.scrollHeight });

/**
 * Keeps the page at its bottom while a turn streams (the composer sits there, so the newest text
 * is right above it) until the reader scrolls up; then `following` is false and `jump` brings the
 * view back and follows again. `change` is anything that changes with each streamed event.
 */
export function useFollowLive(active: boolean, change: unknown) {
  const [following, setFollowing] = useState(true);
  const followingRef = useRef(true);
  const set = useCallback((value: boolean) => {
    followingRef.current = value;
    setFollowing(value);
  }, []);

  useEffect(() => {
    if (!active) return;
    let lastY = window.scrollY;
    // Only the reader scrolls up (following scrolls down, growing text scrolls nothing), and only
    // the reader scrolls down while not following: back at the bottom, following resumes.
    const onScroll = () => {
      const y = window.scrollY;
      if (y < lastY && fromBottom() > AWAY_PX) set(false);
      else if (y > lastY && fromBottom() <= 2) set(true);
      lastY = y;
    };
    // A wheel or key moving up says so before the (smooth) scroll has gone far.
    const onWheel = (event: WheelEvent) => {
      if (event.deltaY < 0) set(false);
    };
    const onKey = (event: KeyboardEvent) => {
      if (["PageUp", "ArrowUp", "Home"].includes(event.key) && !isTyping(event.target)) set(false);
    };
    window.addEventListener("scroll", onScroll, { passive: true });
    window.addEventListener("wheel", onWheel, { passive: true });
    window.addEventListener("keydown", onKey);
    return () => {
      window.removeEventListener("scroll", onScroll);
      window.removeEventListener("wheel", onWheel);
      window.removeEventListener("keydown", onKey);
    };
  }, [active, set]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: `change` is the trigger, read by no one
  useEffect(() => {
    if (active && followingRef.current) toBottom();
  }, [active, change]);

  const jump = useCallback(() => {
    set(true);
    toBottom();
  }, [set]);

  /** A new turn starts: follow it, wherever the reader was. */
  const restart = useCallback(() => {
    set(true);
    requestAnimationFrame(toBottom);
  }, [set]);

  /** After the stored record replaced the live turn: stay at the bottom if following. */
  const settle = useCallback(() => {
    if (followingRef.current) requestAnimationFrame(toBottom);
  }, []);

  return { following, jump, restart, settle };
}
