/** A captured call, made readable: the request's parts and the size facts the inspector states. */
import type { CallPayloadRecord } from "./api-types.js";

export interface RequestMessage {
  role: string;
  /** The message's text (content parts joined); tool calls listed by name. */
  text: string;
  tool_calls: string[];
}

export interface RequestDigest {
  model: string | null;
  messages: RequestMessage[];
  /** The tool names offered. */
  tools: string[];
  /** Every other top-level field (temperature, stream options, …). */
  parameters: Record<string, unknown>;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (isRecord(part) && typeof part.text === "string" ? part.text : ""))
      .join("");
  }
  return "";
}

function toolName(tool: unknown): string {
  if (!isRecord(tool)) return "?";
  const fn = isRecord(tool.function) ? tool.function : tool;
  return typeof fn.name === "string" ? fn.name : "?";
}

/**
 * The request body read as a chat completion request; null when it is not JSON (a body cut at
 * the cap is shown as text instead).
 */
export function describeRequest(body: string): RequestDigest | null {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return null;
  }
  if (!isRecord(value)) return null;
  const { model, messages, tools, ...parameters } = value;
  return {
    model: typeof model === "string" ? model : null,
    messages: Array.isArray(messages)
      ? messages.map((message) => ({
          role: isRecord(message) && typeof message.role === "string" ? message.role : "?",
          text: isRecord(message) ? contentText(message.content) : "",
          tool_calls:
            isRecord(message) && Array.isArray(message.tool_calls)
              ? message.tool_calls.map(toolName)
              : [],
        }))
      : [],
    tools: Array.isArray(tools) ? tools.map(toolName) : [],
    parameters,
  };
}

/** "512 B", "3.4 KiB", "1.2 MiB". */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return "—";
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** What a body's size line says: its size, and how much of it is shown when it was cut. */
export function bodySizeNote(
  shown: string,
  bytes: number,
  truncated: boolean,
): { text: string; cut: boolean } {
  if (!truncated) return { text: formatBytes(bytes), cut: false };
  const kept = new TextEncoder().encode(shown).length;
  return {
    text: `${formatBytes(bytes)}, cut at the capture cap: the first ${formatBytes(kept)} are kept`,
    cut: true,
  };
}

/** The whole capture's storage: both bodies, compressed, against their full size. */
export function storageNote(payload: CallPayloadRecord): string {
  const full = payload.request_bytes + payload.response_bytes;
  return `${formatBytes(payload.stored_bytes)} stored compressed (of ${formatBytes(full)})`;
}
