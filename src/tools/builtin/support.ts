import { createHash } from "node:crypto";
import { abortableSleep } from "../../domain/abortable-sleep.js";
import { InvalidInputError } from "../../domain/errors.js";

/** Shared by the built-in tools: their artificial latency and their deterministic fakes. */

/**
 * Waits at least `ms` milliseconds (timers may fire a little early, so the rest is waited out),
 * rejecting with the signal's reason as soon as it aborts.
 */
export async function simulateLatency(ms: number, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  const startedAt = performance.now();
  let remaining = ms;
  while (remaining > 0) {
    await abortableSleep(Math.ceil(remaining), signal);
    remaining = ms - (performance.now() - startedAt);
  }
}

/** Checks a configured latency: a finite number of milliseconds, zero or more. */
export function latencyOption(value: number | undefined, where: string): number {
  if (value === undefined) return 0;
  if (!Number.isFinite(value) || value < 0) {
    throw new InvalidInputError(`${where}: latency_ms must be a number >= 0, got ${value}`);
  }
  return value;
}

/** Eight hex digits that depend only on `text`. */
export function stableHash(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex").slice(0, 8);
}

/** A URL-safe slug of `text`: lower case words joined by "-", at most 48 characters. */
export function slugOf(text: string): string {
  const slug = text
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 48)
    .replace(/-+$/, "");
  return slug || "item";
}

/** A required string argument; `execute` trusts validated input but still fails clearly. */
export function stringArgument(args: Record<string, unknown>, name: string): string {
  const value = args[name];
  if (typeof value !== "string" || value.length === 0) {
    throw new Error(`${name}: must be a non-empty string`);
  }
  return value;
}
