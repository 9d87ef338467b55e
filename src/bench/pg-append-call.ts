import type { SessionStore } from "../store/session-store.js";

/** The call the PostgreSQL benchmark appends (its writer processes too): turn 1, round 1. */
export function appendBenchCall(store: SessionStore, sessionId: string, key: string) {
  return store.appendUsage(sessionId, {
    turn_index: 1,
    round_index: 1,
    usage: { prompt_tokens: 3, completion_tokens: 7, total_tokens: 10, cached_tokens: 2 },
    ttft_ms: 120,
    elapsed_ms: 450,
    metadata: { metric_key: key },
  });
}
