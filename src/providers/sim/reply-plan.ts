import { InvalidInputError } from "../../domain/errors.js";
import { formatEventTag } from "../../domain/event-protocol.js";
import type { ChatModelRequest, FinishReason } from "../chat-model.js";
import {
  announce,
  answerFromResults,
  clarifyQuestion,
  plainAnswer,
  unavailableNote,
} from "./answer.js";
import { latestUserText, pendingResults, type ToolOffer, toolOffer } from "./conversation.js";
import { type Intent, readIntents } from "./intents.js";
import { drawMalformation, malformArguments } from "./malformed-arguments.js";
import { type NamedCall, offeredName, readNamedCalls } from "./named-call.js";
import { digest, hashString, SeededRandom } from "./seeded-random.js";
import type { SimOptions } from "./sim-options.js";
import { extractArguments, responseFormatTarget } from "./structured-arguments.js";
import {
  argumentsOf,
  BUILTIN_REQUIRED,
  conformToSchema,
  type JsonObject,
  requiredOf,
  toolOf,
} from "./tool-arguments.js";

/** A planned tool call; `raw_arguments` is exactly what the model will stream. */
export interface PlannedToolCall {
  id: string;
  name: string;
  raw_arguments: string;
}

/** Everything the simulated model will say in reply to one request, before it is streamed. */
export interface ReplyPlan {
  /** Prose, possibly with `<event>` tags (dual_agent style) or a JSON object (response_format). */
  text: string;
  /** Native tool calls, in order. */
  tool_calls: PlannedToolCall[];
  finish_reason: FinishReason;
}

/**
 * Decides the reply, in this order: a forced tool (`tool_choice: { name }`) or a `response_format`
 * makes it an event agent that extracts arguments; waiting tool results are answered in prose;
 * otherwise it acts on the newest user message's intents with the tools the request offers.
 */
export function planReply(
  request: ChatModelRequest,
  options: SimOptions,
  requestDigest: string,
): ReplyPlan {
  const offer = toolOffer(request);
  const choice = request.tool_choice;
  const callId = (index: number) => `call_${digest(`${options.seed}:${requestDigest}:${index}`)}`;
  // Each call draws from its own generator, so one call's fate never shifts another's.
  const callRandom = (index: number) =>
    new SeededRandom(hashString(`${requestDigest}:${index}`, options.seed));
  const chosen = (args: JsonObject, required: readonly string[], index: number) =>
    chosenArguments(args, required, options.malformed_arguments_rate, callRandom(index));

  if (typeof choice === "object") {
    const tool =
      offer.style === "native" ? offer.tools.find((t) => t.name === choice.name) : undefined;
    if (tool === undefined) {
      throw new InvalidInputError(
        `sim: tool_choice names "${choice.name}", which the request's tools do not offer`,
      );
    }
    const args = extractArguments(request, { name: tool.name, schema: tool.parameters });
    const call = { id: callId(0), name: tool.name, raw_arguments: JSON.stringify(args) };
    return { text: "", tool_calls: [call], finish_reason: "tool_calls" };
  }
  if (request.response_format !== undefined) {
    const args = extractArguments(request, responseFormatTarget(request, offer.names));
    return { text: JSON.stringify(args), tool_calls: [], finish_reason: "stop" };
  }
  const results = pendingResults(request.messages);
  if (results !== null) return prose(answerFromResults(results));

  const userText = latestUserText(request.messages);
  const toolsAllowed = offer.style !== "none" && choice !== "none";
  const named = readNamedCalls(userText);
  if (named !== null) {
    const plan = planNamedCalls(
      named,
      offer,
      toolsAllowed,
      callId,
      (args, required, index, written) =>
        written === null || written === undefined
          ? chosen(args, required, index)
          : chosenArguments(
              args,
              required,
              options.malformed_arguments_rate,
              callRandom(index),
              written,
            ),
    );
    if (plan !== null) return plan;
  }
  const reading = readIntents(userText);
  const callable = reading.intents.filter(
    (intent) => toolsAllowed && offer.names.includes(toolOf(intent.kind)),
  );
  const uncallable = reading.intents.filter((intent) => !callable.includes(intent));
  const note =
    uncallable.length > 0
      ? unavailableNote(uncallable, offer.style !== "none" && !toolsAllowed)
      : "";

  if (callable.length === 0) {
    if (offer.style === "native" && choice === "required") {
      const tool = offer.tools[0];
      if (tool !== undefined) {
        const args = conformToSchema({}, tool.parameters, userText);
        const raw = chosen(args, requiredOf(tool.parameters), 0);
        return {
          text: "",
          tool_calls: [{ id: callId(0), name: tool.name, raw_arguments: raw }],
          finish_reason: "tool_calls",
        };
      }
    }
    if (note) return prose(note);
    if (reading.unclear.length > 0) return prose(clarifyQuestion(reading.unclear));
    return prose(plainAnswer(userText, toolsAllowed ? offer.names : []));
  }

  const calls = callable.map((intent, index) => {
    const name = toolOf(intent.kind);
    const raw = chosen(argumentsOf(intent), requiredFor(offer, name), index);
    return { id: callId(index), name, raw_arguments: raw };
  });
  if (offer.style === "native") {
    return { text: note, tool_calls: calls, finish_reason: "tool_calls" };
  }
  const text = [
    ...calls.map(
      (call, index) =>
        `${announce(callable[index] as Intent)} ${formatEventTag(call.name, call.raw_arguments)}`,
    ),
    ...(note ? [note] : []),
  ].join("\n");
  return { text, tool_calls: [], finish_reason: "stop" };
}

const prose = (text: string): ReplyPlan => ({ text, tool_calls: [], finish_reason: "stop" });

/**
 * "call NAME with {json}" (one per line for parallel calls): each named tool, if offered, with
 * exactly those arguments as written (or, without any, its schema's required fields filled). Null
 * hands the text to the ordinary intent reading: a name nobody offers, said without arguments, may
 * just be prose ("run the tests").
 */
function planNamedCalls(
  named: readonly NamedCall[],
  offer: ToolOffer,
  toolsAllowed: boolean,
  callId: (index: number) => string,
  chosen: (
    args: JsonObject,
    required: readonly string[],
    index: number,
    written: string | null | undefined,
  ) => string,
): ReplyPlan | null {
  const calls: { id: string; name: string; raw_arguments: string }[] = [];
  for (const [index, call] of named.entries()) {
    const name = offeredName(call.name, offer.names);
    if (name === null) {
      if (named.length === 1 && call.kind === "call" && call.arguments === null) return null;
      return prose(unknownToolNote(call.name, toolsAllowed ? offer.names : []));
    }
    if (!toolsAllowed) {
      return prose(`I would call ${name}, but tool use is turned off for this reply.`);
    }
    if (call.kind === "bad_arguments") {
      return prose(`I did not call ${name}: its arguments are not valid JSON (${call.problem}).`);
    }
    const schema = offer.style === "native" ? offer.tools.find((t) => t.name === name) : undefined;
    const args = call.arguments ?? conformToSchema({}, schema?.parameters ?? {}, "");
    const required = schema === undefined ? [] : requiredOf(schema.parameters);
    calls.push({
      id: callId(index),
      name,
      raw_arguments: chosen(args, required, index, call.written),
    });
  }
  if (offer.style === "native") {
    return { text: "", tool_calls: calls, finish_reason: "tool_calls" };
  }
  return prose(
    calls
      .map((call) => `I'll call ${call.name}. ${formatEventTag(call.name, call.raw_arguments)}`)
      .join("\n"),
  );
}

function unknownToolNote(name: string, offered: readonly string[]): string {
  const choices =
    offered.length > 0 ? `I can call ${offered.join(", ")}.` : "No tools are available to me here.";
  return `I can't call ${name}: no tool by that name is offered here. ${choices}`;
}

function requiredFor(offer: ToolOffer, name: string): readonly string[] {
  const tool = offer.style === "native" ? offer.tools.find((t) => t.name === name) : undefined;
  return tool === undefined ? (BUILTIN_REQUIRED[name] ?? []) : requiredOf(tool.parameters);
}

/**
 * The arguments of a call: malformed at the configured, seeded rate, else as the user wrote them
 * for a named call (`10.0` stays `10.0`), else serialized.
 */
function chosenArguments(
  args: JsonObject,
  required: readonly string[],
  rate: number,
  random: SeededRandom,
  written?: string,
): string {
  const malformation = drawMalformation(random, rate);
  if (malformation !== null) return malformArguments(args, required, malformation, random);
  return written ?? JSON.stringify(args);
}
