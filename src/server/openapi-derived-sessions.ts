import { z } from "zod";
import { type JsonObject, json, object, ok, ref } from "./openapi-shapes.js";
import { ForkBody, ReplayBody } from "./routes/derived-sessions.js";

/**
 * The OpenAPI part for sessions made from another: fork, replay (server-sent events) and the
 * retry of a turn that did not complete.
 */

const integer = { type: "integer" };
const string = { type: "string" };
const error = (description: string) => ({ description, content: json(ref("Error")) });
const common = {
  401: error("the request lacks the server's token (unauthorized)"),
  403: error("a foreign Host header or a cross-origin change (forbidden)"),
  500: error("an unexpected failure, reported with a generic message (internal_error)"),
};
const bodyErrors = {
  400: error("invalid input: the message names each offending field (invalid_input)"),
  413: error("the body is larger than the limit (payload_too_large)"),
  415: error("the body is not application/json (unsupported_media_type)"),
};
const sessionId = {
  name: "id",
  in: "path",
  required: true,
  description: "the source session's id",
  schema: string,
};
const CONFIG_OVERRIDES =
  "Partial lab config merged over the source session's config as a JSON Merge Patch (RFC 7396: objects merge, null removes a key, arrays replace), then validated like a new session's config; the mode may change. A changed chat agent model takes the event agent with it when the two were the same in the source.";

function schemaOf(schema: z.ZodType): JsonObject {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: "input" });
  return rest;
}

const withConfigDescription = (schema: JsonObject): JsonObject => {
  const properties = (schema.properties ?? {}) as Record<string, JsonObject>;
  return {
    ...schema,
    properties: {
      ...properties,
      config: { ...properties.config, description: CONFIG_OVERRIDES },
    },
  };
};

export function derivedSessionSchemas(): JsonObject {
  return {
    ForkBody: withConfigDescription(schemaOf(ForkBody)),
    ReplayBody: withConfigDescription(schemaOf(ReplayBody)),
    ReplayEvent: {
      description:
        "The replay's own events; after each replay_turn come that turn's TurnEvents, as POST /turns sends them.",
      oneOf: [
        object({
          type: { const: "replay" },
          session_id: { ...string, description: "the new session" },
          source_session_id: string,
          turns: { ...integer, description: "how many user messages will be replayed" },
        }),
        object({
          type: { const: "replay_turn" },
          turn_index: { ...integer, description: "1 to `of`" },
          of: integer,
        }),
        object({
          type: { const: "replay_done" },
          session_id: string,
          statuses: {
            type: "array",
            items: string,
            description: "how each replayed turn ended, in order",
          },
        }),
      ],
      discriminator: { propertyName: "type" },
    },
  };
}

export function derivedSessionPaths(): JsonObject {
  return {
    "/api/sessions/{id}/fork": {
      parameters: [sessionId],
      post: {
        operationId: "forkSession",
        summary: "Copy a session's turns 1..turn_index into a new session, under a new config",
        description:
          "The new session holds the source's messages, turns, usage, audit and captured payloads up to turn_index (0: none), its config is the source's with `config` merged over it, `derived_from: {kind: fork, session_id, turn_index}` and the tag `fork`.",
        requestBody: { required: true, content: json(ref("ForkBody")) },
        responses: {
          201: ok("the new session", object({ session: ref("Session") })),
          ...bodyErrors,
          400: error(
            "invalid input, a turn_index past the source's last turn, or a config that cannot run; the message names the field (invalid_input)",
          ),
          404: error("unknown session (session_not_found)"),
          409: error("a turn at or before turn_index is still running (turn_in_progress)"),
          ...common,
        },
      },
    },
    "/api/sessions/{id}/replay": {
      parameters: [sessionId],
      post: {
        operationId: "replaySession",
        summary: "Run a session's user messages again in a new session (server-sent events)",
        description:
          "Creates a session with the source's config and `config` merged over it (`derived_from: {kind: replay, session_id, turn_index: 0}`, tag `replay`), then runs each user message of the source's finished turns as one turn. Events: `replay`, then per turn `replay_turn` followed by the turn's events as POST /turns sends them, then `replay_done`. A failed turn does not stop the replay; closing the connection cancels the running turn and stops it, keeping what ran. Refusals come before the stream, as JSON errors.",
        requestBody: { required: false, content: json(ref("ReplayBody")) },
        responses: {
          200: {
            description: "the replay's events",
            content: {
              "text/event-stream": {
                schema: { oneOf: [ref("ReplayEvent"), ref("TurnEvent")] },
              },
            },
          },
          ...bodyErrors,
          400: error(
            "invalid input, a source with no finished turn, or a config that cannot run (invalid_input)",
          ),
          404: error("unknown session (session_not_found)"),
          ...common,
        },
      },
    },
    "/api/sessions/{id}/turns/{turn_index}/retry": {
      parameters: [
        { ...sessionId, description: "the session" },
        {
          name: "turn_index",
          in: "path",
          required: true,
          description: "the turn to run again",
          schema: { ...integer, minimum: 1 },
        },
      ],
      post: {
        operationId: "retryTurn",
        summary: "Run a turn that did not complete again, as a new turn (server-sent events)",
        description:
          "A new turn of the same session with that turn's user message, streamed exactly like POST /turns; the old turn is kept as it was. Sent as JSON like every POST (Content-Type: application/json); the body, `{}`, is not read. Only a failed, cancelled, interrupted or max_rounds turn can be retried.",
        responses: {
          200: {
            description: "the new turn's events",
            content: { "text/event-stream": { schema: ref("TurnEvent") } },
          },
          400: error("turn_index is not a whole number >= 1 (invalid_input)"),
          404: error("unknown session (session_not_found) or turn (turn_not_found)"),
          409: error(
            "the turn completed or is running (turn_not_retryable), or another turn of the session is running (turn_in_progress)",
          ),
          ...common,
        },
      },
    },
  };
}
