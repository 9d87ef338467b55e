import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  completionChunk,
  errorReply,
  FakeOpenAIServer,
  SSE_DONE,
  sseEvent,
  streamReply,
  usageChunk,
} from "../../test/fake-openai-server.js";
import { TURN_EVENT_TYPES, type TurnEvent } from "../domain/turn-events.js";
import { startTestServer, type TestServer, turnEventsOf } from "./test-fixtures.js";

/**
 * The OpenAPI document's TurnEvent schema is generated from the runtime's zod schema; this checks
 * it against what the server really streams: every event of real turns over HTTP, covering every
 * event type, must validate, and malformed events must not.
 */
describe("OpenAPI TurnEvent schema against the events the server streams", () => {
  let lab: TestServer;
  let fake: FakeOpenAIServer;
  let validate: (event: unknown) => boolean;
  let errorsOf: () => string;

  beforeAll(async () => {
    lab = await startTestServer();
    fake = await FakeOpenAIServer.start();
    const document = (await (await lab.api("/api/openapi.json")).json()) as {
      components: { schemas: { TurnEvent: Record<string, unknown> } };
    };
    // OpenAPI 3.1 schemas are JSON Schema 2020-12, plus the `discriminator` keyword.
    const ajv = new Ajv2020({ discriminator: true, allErrors: true });
    const compiled = ajv.compile(document.components.schemas.TurnEvent);
    validate = (event) => compiled(event);
    errorsOf = () => ajv.errorsText(compiled.errors);
  });
  afterAll(async () => {
    await fake.close();
    await lab.close();
  });

  const turn = async (config: Record<string, unknown>, message: string): Promise<TurnEvent[]> => {
    const id = lab.store.createSession({ title: "schema", config });
    const response = await lab.api(`/api/sessions/${id}/turns`, {
      method: "POST",
      json: { message },
    });
    expect(response.status).toBe(200);
    return turnEventsOf(await response.text());
  };

  const fakeChat = (max_retries: number) => ({
    tool_invocation_mode: "chat_agent_tools",
    chat_agent: { model: "openai:fake-model", base_url: fake.baseUrl, options: { max_retries } },
    tools: [],
  });

  it("accepts every event of real turns, and those turns cover every event type", async () => {
    const events = [
      // Tool calls with malformed arguments (the fallback), thinking, results, usage.
      ...(await turn(
        {
          tool_invocation_mode: "dual_agent",
          chat_agent: { model: "sim", options: { malformed_arguments_rate: 1, reasoning: true } },
        },
        "search for agent lab",
      )),
      // A call that needs approval, denied when nobody answers in time.
      ...(await turn(
        { tool_invocation_mode: "chat_agent_tools", approval_timeout_ms: 1 },
        "file a ticket about the login page",
      )),
    ];
    // An endpoint that asks for a retry, then refuses; then one that fails the turn.
    fake.enqueue(
      errorReply(429, "slow down", { "retry-after-ms": "1" }),
      streamReply([
        sseEvent(completionChunk({ role: "assistant", content: "" })),
        sseEvent({ ...completionChunk({}), choices: [{ index: 0, delta: { refusal: "No." } }] }),
        sseEvent(completionChunk({}, "stop")),
        sseEvent(usageChunk({ prompt_tokens: 5, completion_tokens: 1 })),
        SSE_DONE,
      ]),
      errorReply(400, "bad request"),
    );
    events.push(...(await turn(fakeChat(1), "refuse this")));
    events.push(...(await turn(fakeChat(0), "fail this")));

    for (const event of events) {
      expect(validate(event), `${JSON.stringify(event)}: ${errorsOf()}`).toBe(true);
    }
    const seen = new Set(events.map((event) => event.type));
    expect([...TURN_EVENT_TYPES].filter((type) => !seen.has(type))).toEqual([]);
    const ends = events.filter((event) => event.type === "turn_end");
    expect(ends.map((end) => end.status)).toEqual([
      "completed",
      "completed",
      "completed",
      "failed",
    ]);
  });

  it("rejects malformed events", () => {
    const roundStart = { type: "round_start", round_index: 1 };
    expect(validate(roundStart), errorsOf()).toBe(true);
    const malformed: unknown[] = [
      { type: "round_start" },
      { type: "round_start", round_index: "1" },
      { type: "round_start", round_index: -1 },
      { ...roundStart, extra: true },
      { type: "no_such_event", round_index: 1 },
      { type: "text_delta", round_index: 1, text: null },
      { type: "turn_end", session_id: "s", turn_index: 1, status: "done", answer: "" },
      { type: "approval_decided", round_index: 1, event_id: "c", event_name: "t" },
      { round_index: 1 },
      null,
    ];
    for (const event of malformed) {
      expect(validate(event), JSON.stringify(event)).toBe(false);
    }
  });
});
