import { describe, expect, it } from "vitest";
import type { CallPayloadRecord } from "./api-types.js";
import {
  bodySizeNote,
  decodeStream,
  describeRequest,
  formatBytes,
  storageNote,
} from "./call-payload.js";

describe("describeRequest", () => {
  it("reads a chat completion request as its model, messages, tools and other parameters", () => {
    const body = JSON.stringify({
      model: "gpt-x",
      messages: [
        { role: "system", content: "Be brief." },
        {
          role: "user",
          content: [
            { type: "text", text: "find " },
            { type: "text", text: "x" },
          ],
        },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "mock_search" } }],
        },
        { role: "tool", tool_call_id: "c1", content: '{"results":[]}' },
      ],
      tools: [{ type: "function", function: { name: "mock_search", parameters: {} } }],
      stream: true,
      temperature: 0.2,
    });
    expect(describeRequest(body)).toEqual({
      model: "gpt-x",
      messages: [
        { role: "system", text: "Be brief.", tool_calls: [] },
        { role: "user", text: "find x", tool_calls: [] },
        { role: "assistant", text: "", tool_calls: ["mock_search"] },
        { role: "tool", text: '{"results":[]}', tool_calls: [] },
      ],
      tools: ["mock_search"],
      parameters: { stream: true, temperature: 0.2 },
    });
  });

  it("gives nothing for a body that is not a JSON object (one cut at the cap)", () => {
    expect(describeRequest('{"model":"gpt-x","messages":[{"ro')).toBeNull();
    expect(describeRequest("[1,2]")).toBeNull();
    expect(describeRequest('"text"')).toBeNull();
  });
});

describe("sizes", () => {
  it("formats bytes", () => {
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(3482)).toBe("3.4 KiB");
    expect(formatBytes(5 * 1024 * 1024)).toBe("5.0 MiB");
  });

  it("says when a body was cut and how much of it is kept", () => {
    expect(bodySizeNote("abc", 3, false)).toEqual({ text: "3 B", cut: false });
    expect(bodySizeNote("é".repeat(600), 300_000, true)).toEqual({
      text: "293.0 KiB, cut at the capture cap: the first 1.2 KiB are kept",
      cut: true,
    });
  });

  it("states the compressed storage against the full sizes", () => {
    const payload = {
      request_bytes: 2048,
      response_bytes: 2048,
      stored_bytes: 900,
    } as CallPayloadRecord;
    expect(storageNote(payload)).toBe("900 B stored compressed (of 4.0 KiB)");
  });
});

describe("decodeStream", () => {
  const event = (delta: Record<string, unknown>) =>
    `data: ${JSON.stringify({ choices: [{ index: 0, delta }] })}\n\n`;

  it("joins the deltas a raw stream splits, tags included", () => {
    const raw = [
      event({ role: "assistant", content: "" }),
      event({ reasoning_content: "Need a " }),
      event({ reasoning: "search." }),
      event({ content: "Looking. <" }),
      event({ content: "ev" }),
      event({ content: 'ent name="mock_search">{}</event>' }),
      event({ tool_calls: [{ index: 0, id: "c1", function: { name: "mock_", arguments: "" } }] }),
      event({ tool_calls: [{ index: 0, function: { name: "search", arguments: '{"q":' } }] }),
      event({ tool_calls: [{ index: 0, function: { arguments: '"x"}' } }] }),
      `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 3 } })}\r\n\r\n`,
      ": keep-alive\n\n",
      "data: [DONE]\n\n",
    ].join("");
    expect(decodeStream(raw)).toEqual({
      content: 'Looking. <event name="mock_search">{}</event>',
      reasoning: "Need a search.",
      refusal: "",
      tool_calls: [{ name: "mock_search", arguments: '{"q":"x"}' }],
      events: 10,
    });
  });

  it("keeps a refusal apart, and gives nothing for a body with no event", () => {
    expect(decodeStream(event({ refusal: "No." }))?.refusal).toBe("No.");
    expect(decodeStream("")).toBeNull();
    expect(decodeStream('data: {"choices":[{"delta":{"content":"cut')).toBeNull();
    expect(decodeStream("<html>502 Bad Gateway</html>")).toBeNull();
  });
});
