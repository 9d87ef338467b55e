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

export interface DecodedStream {
  /** The answer's text, deltas joined (in dual_agent, `<event>` tags and all). */
  content: string;
  reasoning: string;
  refusal: string;
  /** Tool calls as their deltas built them up, by index. */
  tool_calls: { name: string; arguments: string }[];
  /** How many `data:` events were read (`[DONE]` excluded). */
  events: number;
}

/**
 * The text a raw Chat Completions stream carries, its deltas joined: what the model wrote,
 * readable where the raw stream splits a tag across chunks. Null when no event parses (not an
 * SSE stream, or a body cut before its first event ended).
 */
export function decodeStream(raw: string): DecodedStream | null {
  const decoded: DecodedStream = {
    content: "",
    reasoning: "",
    refusal: "",
    tool_calls: [],
    events: 0,
  };
  for (const line of raw.split(/\r\n|\r|\n/)) {
    if (!line.startsWith("data:")) continue;
    const data = line.slice(5).trim();
    if (data === "[DONE]") continue;
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      continue;
    }
    if (!isRecord(chunk)) continue;
    decoded.events++;
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    for (const choice of choices) {
      const delta = isRecord(choice) && isRecord(choice.delta) ? choice.delta : null;
      if (!delta) continue;
      decoded.content += contentText(delta.content);
      const thinking = delta.reasoning_content ?? delta.reasoning;
      if (typeof thinking === "string") decoded.reasoning += thinking;
      if (typeof delta.refusal === "string") decoded.refusal += delta.refusal;
      if (Array.isArray(delta.tool_calls)) addToolDeltas(decoded.tool_calls, delta.tool_calls);
    }
  }
  // Indexes may skip (a server numbering from 1): the list has no holes.
  decoded.tool_calls = decoded.tool_calls.filter((call) => call !== undefined);
  return decoded.events === 0 ? null : decoded;
}

function addToolDeltas(calls: DecodedStream["tool_calls"], deltas: unknown[]): void {
  for (const delta of deltas) {
    if (!isRecord(delta)) continue;
    const index = typeof delta.index === "number" ? delta.index : calls.length;
    let call = calls[index];
    if (!call) {
      call = { name: "", arguments: "" };
      calls[index] = call;
    }
    const fn = isRecord(delta.function) ? delta.function : {};
    if (typeof fn.name === "string") call.name += fn.name;
    if (typeof fn.arguments === "string") call.arguments += fn.arguments;
  }
}
