import { createHash } from "node:crypto";

/**
 * What the event kernel stores for an MCP tool result. The stored tool message is also what the
 * model is sent, so binary payloads (images, audio, blobs) are not copied into it: a model reads
 * nothing from base64 and pays for every character. Their description (type, MIME type, size,
 * digest, URI) is kept in `content`, and a one-line summary such as `[image image/png, 12 KB]`
 * takes their place in `text`, in the order the server gave.
 */

export interface McpContentRecord {
  type: string;
  mime_type?: string;
  /** Decoded size of a binary payload. */
  bytes?: number;
  /** sha256 of the decoded payload, to tell results apart without keeping them. */
  sha256?: string;
  uri?: string;
  name?: string;
}

/** A result with only text is that text; otherwise this object. */
export interface McpToolValue {
  /** Absent when it only repeated `structured_content` as JSON. */
  text?: string;
  structured_content?: unknown;
  content?: McpContentRecord[];
}

/** `isError: true`: the server says the call failed; the kernel turns it into an error result. */
export class McpToolCallError extends Error {
  override readonly name = "McpToolCallError";
}

interface CallResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: boolean | undefined;
  /** Pre-2024-11 servers answer `{ toolResult }`. */
  toolResult?: unknown;
}

export function mapCallToolResult(result: CallResult): string | McpToolValue {
  const blocks = Array.isArray(result.content) ? (result.content as Block[]) : [];
  const lines: string[] = [];
  const records: McpContentRecord[] = [];
  for (const block of blocks) {
    if (block.type === "text" && typeof block.text === "string") {
      lines.push(block.text);
      continue;
    }
    const record = describeBlock(block);
    records.push(record);
    lines.push(summarize(record));
    // An embedded text resource is readable content: it goes in the message, under its summary.
    const embedded = block.type === "resource" ? block.resource?.text : undefined;
    if (typeof embedded === "string") lines.push(embedded);
  }
  const text = lines.join("\n");
  if (result.isError === true) {
    throw new McpToolCallError(text || "the MCP tool reported an error without a message");
  }
  if (result.toolResult !== undefined && blocks.length === 0) {
    return { text: JSON.stringify(result.toolResult), structured_content: result.toolResult };
  }
  if (records.length === 0 && result.structuredContent === undefined) return text;
  // Servers are asked to repeat structured content as JSON text; stored twice it costs twice.
  const repeated =
    records.length === 0 &&
    result.structuredContent !== undefined &&
    text === JSON.stringify(result.structuredContent);
  return {
    ...(repeated ? {} : { text }),
    ...(result.structuredContent === undefined
      ? {}
      : { structured_content: result.structuredContent }),
    ...(records.length === 0 ? {} : { content: records }),
  };
}

interface Block {
  type?: unknown;
  text?: unknown;
  data?: unknown;
  mimeType?: unknown;
  uri?: unknown;
  name?: unknown;
  size?: unknown;
  resource?: { uri?: unknown; mimeType?: unknown; text?: unknown; blob?: unknown };
}

function describeBlock(block: Block): McpContentRecord {
  const type = typeof block.type === "string" ? block.type : "unknown";
  const record: McpContentRecord = { type };
  if (typeof block.mimeType === "string") record.mime_type = block.mimeType;
  if (typeof block.data === "string") Object.assign(record, payload(block.data));
  if (type === "resource_link") {
    if (typeof block.uri === "string") record.uri = block.uri;
    if (typeof block.name === "string") record.name = block.name;
    if (typeof block.size === "number") record.bytes = block.size;
  }
  const resource = block.resource;
  if (type === "resource" && resource !== undefined) {
    if (typeof resource.uri === "string") record.uri = resource.uri;
    if (typeof resource.mimeType === "string") record.mime_type = resource.mimeType;
    if (typeof resource.blob === "string") Object.assign(record, payload(resource.blob));
  }
  return record;
}

function payload(base64: string): { bytes: number; sha256: string } {
  const bytes = Buffer.from(base64, "base64");
  return { bytes: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") };
}

/** `[image image/png, 12 KB]`, `[resource_link file:///a.txt text/plain]`. */
function summarize(record: McpContentRecord): string {
  const what = [record.type, record.uri, record.mime_type].filter(Boolean).join(" ");
  const size = sizeOf(record);
  return `[${what}${size === undefined ? "" : `, ${size}`}]`;
}

function sizeOf(record: McpContentRecord): string | undefined {
  if (record.bytes === undefined) return undefined;
  if (record.bytes < 1024) return `${record.bytes} B`;
  if (record.bytes < 1024 * 1024) return `${Math.round(record.bytes / 1024)} KB`;
  return `${(record.bytes / (1024 * 1024)).toFixed(1)} MB`;
}
