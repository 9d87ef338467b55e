import { describe, expect, it } from "vitest";
import type { ToolCardData } from "./transcript.js";
import { isRetryable, retriedIn, turnOutcome } from "./turn-outcome.js";

const card = (state: ToolCardData["state"]): ToolCardData => ({
  id: "c",
  name: "mock_search",
  arguments: null,
  raw_arguments: "{}",
  requested_raw_arguments: null,
  state,
  result: null,
  latency_ms: null,
  used_fallback: false,
  fallback: null,
});

const withTools = (status: string, states: ToolCardData["state"][]) =>
  turnOutcome({
    status: status as never,
    rounds: [
      {
        round_index: 1,
        text: "",
        reasoning: "",
        refusal: "",
        tools: states.map(card),
        finish_reason: null,
      },
    ],
  });

describe("turnOutcome", () => {
  it("is not a plain success when every tool call failed", () => {
    expect(withTools("completed", ["error"])).toMatchObject({
      label: "completed · its tool call failed",
      tone: "warn",
      all_tools_failed: true,
    });
    expect(withTools("completed", ["error", "error"]).label).toBe(
      "completed · all 2 tool calls failed",
    );
  });

  it("says which failed when some worked, and is a success", () => {
    expect(withTools("completed", ["error", "ok"])).toMatchObject({
      label: "completed · 1 of 2 tool calls failed",
      tone: "ok",
      all_tools_failed: false,
    });
  });

  it("keeps the stored status otherwise", () => {
    expect(withTools("completed", [])).toMatchObject({ label: "completed", tone: "ok" });
    expect(withTools("completed", ["ok"])).toMatchObject({ label: "completed", tone: "ok" });
    expect(withTools("failed", ["error"])).toMatchObject({ label: "failed", tone: "error" });
    expect(withTools("max_rounds", [])).toMatchObject({ label: "max rounds", tone: "warn" });
  });
});

describe("isRetryable", () => {
  it("accepts the statuses the retry endpoint accepts", () => {
    expect(["failed", "cancelled", "interrupted", "max_rounds"].every(isRetryable)).toBe(true);
    expect(isRetryable("completed")).toBe(false);
    expect(isRetryable("running")).toBe(false);
  });
});

describe("retriedIn", () => {
  const turn = (turn_index: number | null, status: string, user_message: string) => ({
    turn_index,
    status: status as never,
    user_message,
  });

  it("names the next turn when it sends a failed turn's message again", () => {
    const transcript = [turn(1, "failed", "hi"), turn(2, "completed", "hi")];
    expect(retriedIn(transcript, 0)).toBe(2);
    expect(retriedIn(transcript, 1)).toBeNull();
  });

  it("is null when the next turn is another message, missing, or still live", () => {
    expect(retriedIn([turn(1, "failed", "hi"), turn(2, "completed", "bye")], 0)).toBeNull();
    expect(retriedIn([turn(1, "failed", "hi")], 0)).toBeNull();
    expect(retriedIn([turn(1, "failed", "hi"), turn(null, "running", "hi")], 0)).toBeNull();
  });

  it("is null for a completed turn whose message was sent again", () => {
    expect(retriedIn([turn(1, "completed", "hi"), turn(2, "completed", "hi")], 0)).toBeNull();
  });

  it("follows a chain of retries one turn at a time", () => {
    const transcript = [
      turn(1, "cancelled", "hi"),
      turn(2, "max_rounds", "hi"),
      turn(3, "completed", "hi"),
    ];
    expect(retriedIn(transcript, 0)).toBe(2);
    expect(retriedIn(transcript, 1)).toBe(3);
  });
});
