import { useCallback, useEffect, useRef, useState } from "react";

/** Scrolling up by more than this from the bottom stops following; back within it resumes. */
const AWAY_PX = 48;

const fromBottom = () =>
  document.documentElement.scrollHeight - (window.scrollY + window.innerHeight);

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
    const onScroll = () => {
      const y = window.scrollY;
      // Only the reader scrolls up: following scrolls down, and growing text scrolls nothing.
      if (y < lastY && fromBottom() > AWAY_PX) set(false);
      else if (fromBottom() <= AWAY_PX) set(true);
      lastY = y;
    };
    window.addEventListener("scroll", onScroll, { passive: true });
    return () => window.removeEventListener("scroll", onScroll);
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
