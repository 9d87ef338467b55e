import type { Approver } from "../domain/approvals.js";
import { InvalidInputError } from "../domain/errors.js";
import type { SessionRecord, TurnRecord, TurnRecordStatus } from "../domain/records.js";
import type { ReplayEvent } from "../domain/replay-events.js";
import type { TurnEvent } from "../domain/turn-events.js";
import { isRetriedBy } from "../domain/turn-retry-rule.js";
import type { SessionStore } from "../store/session-store.js";
import { type RunTurnOptions, runTurn } from "./run-turn.js";
import { type DeriveSessionOptions, deriveSession, requireSource } from "./session-fork.js";
import type { TurnProviders } from "./turn-providers.js";

/** A replay ready to run: its new (empty) session and the source's user messages, in order. */
export interface PreparedReplay {
  session: SessionRecord;
  source_session_id: string;
  messages: string[];
}

/**
 * Creates the session a replay runs in (the source's config with the overrides, no turns) and
 * reads the user messages to send, before anything streams: refusals (unknown session, a session
 * with nothing to replay, a bad config) throw here. A turn still running in the source is left
 * out: its message is there, but it may not be the source's last word yet.
 */
export async function prepareReplay(options: DeriveSessionOptions): Promise<PreparedReplay> {
  const { store, source_id } = options;
  const source = await requireSource(store, source_id);
  const messages = messagesToReplay(await store.listTurns(source_id));
  if (messages.length === 0) {
    throw new InvalidInputError(`session ${source_id} has no finished turns to replay`);
  }
  const title = options.title ?? `${source.title} (replay)`;
  const session = await deriveSession(
    options,
    source,
    { kind: "replay", session_id: source_id, turn_index: 0 },
    title,
  );
  return { session, source_session_id: source_id, messages };
}

/**
 * The user messages a replay sends: a turn that did not reach its answer and was retried (the next
 * turn sends the same message) is left out, so the replay asks what the user meant once, as the
 * source's conversation finally went.
 */
function messagesToReplay(turns: TurnRecord[]): string[] {
  const finished = turns.filter((turn) => turn.status !== "running");
  return finished
    .filter((turn, at) => !isRetriedBy(turn, finished[at + 1]))
    .map((turn) => turn.user_message);
}

export interface RunReplayOptions {
  store: SessionStore;
  providers: TurnProviders;
  replay: PreparedReplay;
  /** Cancels the running turn and stops the replay; what ran is kept. */
  signal?: AbortSignal | undefined;
  approve?: Approver | undefined;
  /** Models to use instead of building them from the config (as runTurn takes them). */
  models?: RunTurnOptions["models"] | undefined;
}

/**
 * Runs each user message of the source as one turn of the new session, in order, and reports
 * them: `replay`, then per turn `replay_turn` and its turn events, then `replay_done`. A failed
 * turn does not stop the replay (its record is what a comparison needs); a cancelled one does.
 */
export async function* runReplay(
  options: RunReplayOptions,
): AsyncGenerator<ReplayEvent | TurnEvent, void, undefined> {
  const { replay, signal } = options;
  const session_id = replay.session.id;
  const of = replay.messages.length;
  yield { type: "replay", session_id, source_session_id: replay.source_session_id, turns: of };
  const statuses: TurnRecordStatus[] = [];
  for (const [position, message] of replay.messages.entries()) {
    if (signal?.aborted) break;
    yield { type: "replay_turn", turn_index: position + 1, of };
    for await (const event of runTurn({
      store: options.store,
      providers: options.providers,
      session_id,
      message,
      ...(signal !== undefined ? { signal } : {}),
      ...(options.approve !== undefined ? { approve: options.approve } : {}),
      ...(options.models !== undefined ? { models: options.models } : {}),
    })) {
      if (event.type === "turn_end") statuses.push(event.status);
      yield event;
    }
    if (statuses.at(-1) === "cancelled") break;
  }
  yield { type: "replay_done", session_id, statuses };
}
