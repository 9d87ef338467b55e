/** Display formatting for numbers, durations and times. */

import { formatDuration } from "../../src/domain/number-format.js";

const integer = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

export function formatInt(value: number | null | undefined): string {
  return value === null || value === undefined || Number.isNaN(value) ? "—" : integer.format(value);
}

/** "850 ms", "1.24 s", "2 min 5 s": the lab's one duration format (src/domain/number-format.ts). */
export function formatMs(value: number | null | undefined): string {
  return formatDuration(value, "—");
}

/** Axis ticks in the one duration format ("250 ms", "1.50 s"), the origin a bare "0". */
export function formatTickMs(value: number): string {
  return value === 0 ? "0" : formatDuration(value);
}

export function formatTickCount(value: number): string {
  if (value >= 1_000_000) return `${Math.round(value / 100_000) / 10}M`;
  if (value >= 1000) return `${Math.round(value / 100) / 10}k`;
  return `${Math.round(value)}`;
}

export function formatPercent(value: number | null | undefined, digits = 1): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return "—";
  return `${(value * 100).toFixed(digits)}%`;
}

export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return date.toLocaleString(undefined, dateTimeOptions(date));
}

/**
 * `formatDateTime` as its day and its time, for a list that may set them on two lines when the
 * window is narrow (never inside either); one part (the text as given) when it is not a date.
 */
export function formatDateTimeParts(iso: string | null | undefined): [string, string] | [string] {
  if (!iso) return ["—"];
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return [iso];
  const { year, month, day, hour, minute } = dateTimeOptions(date);
  return [
    date.toLocaleDateString(undefined, { year, month, day }),
    date.toLocaleTimeString(undefined, { hour, minute }),
  ];
}

function dateTimeOptions(date: Date): Intl.DateTimeFormatOptions {
  // The year only when it is not this one: the lists stay narrow.
  const otherYear = date.getFullYear() !== new Date().getFullYear();
  return {
    ...(otherYear ? { year: "numeric" } : {}),
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
  };
}

/** "14:03:07.125" for audit entries. */
export function formatClock(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const pad = (value: number, size = 2) => String(value).padStart(size, "0");
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

export function prettyJson(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Pretty-prints JSON text; text that is not JSON comes back as it was. */
export function prettyJsonText(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

export const isSimulatedModel = (model: string | null | undefined): boolean =>
  typeof model === "string" && model.trim().startsWith("sim");

export const MODE_LABELS: Record<string, string> = {
  dual_agent: "dual agent",
  chat_agent_tools: "chat agent tools",
};

export const modeLabel = (mode: string): string => MODE_LABELS[mode] ?? mode;

/**
 * The chat and event agents' model strings of a stored session config, by the server's rule (the
 * session list's `chat_model` and `event_model`): a missing or empty model is `sim`, and a config
 * without an event agent uses the chat agent's model for it.
 */
export function agentModels(config: Record<string, unknown>): { chat: string; event: string } {
  const named = (agent: "chat_agent" | "event_agent") => {
    const model = modelOf(config, agent);
    return model === null || model === "" ? "sim" : model;
  };
  const chat = named("chat_agent");
  // Present, even as null or without a model, the event agent is its own (the server's json_type).
  return { chat, event: Object.hasOwn(config, "event_agent") ? named("event_agent") : chat };
}

/** The model string of one agent in a stored session config. */
function modelOf(
  config: Record<string, unknown>,
  agent: "chat_agent" | "event_agent",
): string | null {
  const value = config[agent];
  if (value === null || typeof value !== "object") return null;
  const model = (value as { model?: unknown }).model;
  return typeof model === "string" ? model : null;
}
