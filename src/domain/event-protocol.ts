/**
 * The text protocol of the dual_agent mode, shared by the mode (which writes catalogs and reads
 * tags) and by models that speak it (the simulated model reads catalogs and writes tags).
 *
 *   catalog, in the chat agent's system prompt:  a header, then one line per event
 *   request, in the chat agent's streamed text:   <event name="NAME">{json arguments}</event>
 *   result, sent back in the next round:          <event_result id="ID" name="NAME">…</event_result>
 */

export const EVENT_CATALOG_HEADER = "## Events you can request";

export interface EventDescription {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

interface PropertySchema {
  type?: string;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
}

/** `query: string, limit?: integer 1..10, priority?: "low"|"normal"|"high"` */
export function argumentSignature(parameters: Record<string, unknown>): string {
  const properties = (parameters.properties ?? {}) as Record<string, PropertySchema>;
  const required = new Set((parameters.required ?? []) as string[]);
  return Object.entries(properties)
    .map(([name, schema]) => {
      const type = schema.enum
        ? schema.enum.map((value) => JSON.stringify(value)).join("|")
        : (schema.type ?? "any");
      const range =
        schema.minimum !== undefined || schema.maximum !== undefined
          ? ` ${schema.minimum ?? ""}..${schema.maximum ?? ""}`
          : "";
      return `${name}${required.has(name) ? "" : "?"}: ${type}${range}`;
    })
    .join(", ");
}

export function renderEventCatalog(events: readonly EventDescription[]): string {
  const lines = events.map(
    (event) => `- ${event.name}(${argumentSignature(event.parameters)}): ${event.description}`,
  );
  return [
    EVENT_CATALOG_HEADER,
    ...lines,
    "",
    "To request an event, write it in your reply exactly as",
    '<event name="NAME">{"argument": "value"}</event>',
    "with the arguments as one JSON object. You may request several events in one reply. Their",
    "results come back in the next message as <event_result> blocks; answer the user from them.",
  ].join("\n");
}

/** The event names a system prompt offers, or null when it holds no catalog. */
export function parseEventCatalog(systemPrompt: string): string[] | null {
  const start = systemPrompt.indexOf(EVENT_CATALOG_HEADER);
  if (start === -1) return null;
  const names: string[] = [];
  for (const line of systemPrompt.slice(start).split("\n").slice(1)) {
    const match = /^- ([A-Za-z0-9_.-]+)\(/.exec(line);
    if (!match) break;
    names.push(match[1] as string);
  }
  return names;
}

const escapeAttribute = (value: string) => value.replace(/&/g, "&amp;").replace(/"/g, "&quot;");

export function formatEventTag(name: string, rawArguments: string): string {
  return `<event name="${escapeAttribute(name)}">${rawArguments}</event>`;
}

export interface EventResult {
  id: string;
  name: string;
  content: string;
}

export function renderEventResult(result: EventResult): string {
  return `<event_result id="${escapeAttribute(result.id)}" name="${escapeAttribute(result.name)}">${result.content}</event_result>`;
}

const RESULT_PATTERN = /<event_result id="([^"]*)" name="([^"]*)">([\s\S]*?)<\/event_result>/g;
const unescapeAttribute = (value: string) => value.replace(/&quot;/g, '"').replace(/&amp;/g, "&");

export function parseEventResults(text: string): EventResult[] {
  return [...text.matchAll(RESULT_PATTERN)].map((match) => ({
    id: unescapeAttribute(match[1] as string),
    name: unescapeAttribute(match[2] as string),
    content: match[3] as string,
  }));
}
