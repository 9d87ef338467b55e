import type { ClientCall } from "./client-tools.js";

/** Rendered segments: a round's calls and where each stands. */
export interface RoundWatch {
  /** The calls as the model wrote them, by id. */
  calls: Map<string, ClientCall>;
  settled: Set<string>;
  at_client: Map<string, ClientCall>;
  model_done: boolean;
}

/** A rendered round's calls as the client got them: id → arguments. */
export function atClient(round: RoundWatch): Map<string, string> {
  return new Map([...round.at_client].map(([id, call]) => [id, call.arguments]));
}

export function newRoundWatch(): RoundWatch {
  return { calls: new Map(), settled: new Set(), at_client: new Map(), model_done: false };
}
