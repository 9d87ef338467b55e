import type { ChatModelRequest } from "../chat-model.js";
import { withoutEventResults } from "./conversation.js";
import { type Intent, readIntents } from "./intents.js";
import {
  argumentsOf,
  conformToSchema,
  type JsonObject,
  kindOfTool,
  propertiesOf,
  SEARCH_TOOL,
  TICKET_TOOL,
} from "./tool-arguments.js";

/**
 * The event agent's job: given a tool (forced with `tool_choice`, or described by a
 * `response_format`), extract its arguments from the conversation. The user's intent is looked up
 * from the newest message backwards, so a fallback prompt that quotes the conversation works as
 * well as the conversation itself.
 */

export interface ArgumentTarget {
  /** The tool whose arguments are wanted, when it can be told. */
  name: string | null;
  /** The JSON Schema the arguments must satisfy, when the request carries one. */
  schema: JsonObject | null;
}

/** Which tool a `response_format` request is about: by schema name, by schema shape, or by mention. */
export function responseFormatTarget(
  request: ChatModelRequest,
  known: readonly string[],
): ArgumentTarget {
  const format = request.response_format;
  const candidates = [...new Set([...known, SEARCH_TOOL, TICKET_TOOL])];
  if (format?.type === "json_schema") {
    const byName = candidates.find((name) => format.name.includes(name));
    if (byName !== undefined) return { name: byName, schema: format.schema };
    const properties = propertiesOf(format.schema);
    if ("query" in properties) return { name: SEARCH_TOOL, schema: format.schema };
    if ("title" in properties) return { name: TICKET_TOOL, schema: format.schema };
    return { name: mentionedTool(request, candidates), schema: format.schema };
  }
  return { name: mentionedTool(request, candidates), schema: null };
}

function mentionedTool(request: ChatModelRequest, candidates: readonly string[]): string | null {
  for (const message of [...request.messages].reverse()) {
    const mentions = candidates
      .map((name) => ({ name, at: message.content.indexOf(name) }))
      .filter((mention) => mention.at >= 0)
      .sort((left, right) => left.at - right.at);
    if (mentions[0] !== undefined) return mentions[0].name;
  }
  return null;
}

export function extractArguments(request: ChatModelRequest, target: ArgumentTarget): JsonObject {
  const kind = target.name === null ? null : kindOfTool(target.name);
  const texts = request.messages
    .filter((message) => message.role === "user" || message.role === "system")
    .map((message) => withoutEventResults(message.content))
    .reverse();
  let args: JsonObject = {};
  let subject = texts.find((text) => text !== "") ?? "";
  // What the refused call held: of two searches asked together, the repair of the second call
  // is about the second one, as a model reading those arguments would see.
  const written = writtenValues(request);
  for (const text of texts) {
    const candidates = readIntents(text).intents.filter(
      (candidate) => kind === null || candidate.kind === kind,
    );
    const intent =
      candidates.find((candidate) => written.has(subjectOf(candidate))) ?? candidates[0];
    if (intent === undefined) continue;
    // An unknown tool with no schema-matching intent still gets the subject of what was asked.
    if (target.name === null || kind !== null) args = argumentsOf(intent);
    subject = intent.kind === "search" ? intent.query : intent.title;
    break;
  }
  return target.schema === null ? args : conformToSchema(args, target.schema, shorten(subject));
}

const subjectOf = (intent: Intent) => (intent.kind === "search" ? intent.query : intent.title);

/** The marker the lab's argument fallback quotes a refused call's arguments after. */
const WROTE = "The assistant wrote these arguments: ";
const REFUSED = "\nThey were refused: ";

/** The string values of the arguments a repair request quotes (none when it quotes none). */
function writtenValues(request: ChatModelRequest): Set<string> {
  const values = new Set<string>();
  for (const message of request.messages) {
    if (message.role !== "system") continue;
    const at = message.content.indexOf(WROTE);
    if (at < 0) continue;
    // Up to the refusal's line: a model may have written its arguments over several lines.
    const rest = message.content.slice(at + WROTE.length);
    const end = rest.indexOf(REFUSED);
    try {
      const quoted: unknown = JSON.parse(end < 0 ? rest : rest.slice(0, end));
      if (quoted !== null && typeof quoted === "object") {
        for (const value of Object.values(quoted)) {
          if (typeof value === "string") values.add(value.trim());
        }
      }
    } catch {
      // Arguments that are not JSON quote nothing to go by.
    }
  }
  return values;
}

function shorten(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 200 ? flat.slice(0, 200) : flat;
}
