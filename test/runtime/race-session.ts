import { expect } from "vitest";
import type { TurnRecord } from "../../src/domain/records.js";
import { SqliteSessionStore } from "../../src/store/sqlite/sqlite-session-store.js";

/** The session the race tests fight over. */
export const RACE_SESSION = "race";

/**
 * Creates the race session in the database at `path`, on a model that takes a moment to answer,
 * so a turn is still running when a rival tries to start one.
 */
export function createRaceSession(path: string): void {
  const setup = new SqliteSessionStore(path);
  try {
    setup.createSession({
      title: "race",
      session_id: RACE_SESSION,
      config: {
        tool_invocation_mode: "chat_agent_tools",
        chat_agent: { model: "sim", options: { first_token_ms: 15 } },
      },
    });
  } finally {
    setup.close();
  }
}

/** No two turns overlap in time: each starts after the previous one ended. */
export function expectTurnsInSequence(turns: readonly TurnRecord[]): void {
  for (let index = 1; index < turns.length; index++) {
    const previous = turns[index - 1];
    const current = turns[index];
    expect(
      Date.parse(current?.started_at ?? "") >= Date.parse(previous?.completed_at ?? ""),
      `turn ${current?.turn_index} started before turn ${previous?.turn_index} ended`,
    ).toBe(true);
  }
}
