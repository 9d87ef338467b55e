import { z } from "zod";
import type { Approver } from "../domain/approvals.js";
import type { ChatMessage } from "../domain/messages.js";
import type { LabSessionConfig, LabSessionConfigInput } from "../domain/session-config.js";
import type { TurnEvent } from "../domain/turn-events.js";
import { parseInput } from "../domain/validation.js";
import type { ChatModel } from "../providers/chat-model.js";
import type { SessionStore } from "../store/session-store.js";
import type { ToolRegistry } from "../tools/registry.js";
import { PauseClock } from "./approval-gate.js";
import { elapsedSince } from "./elapsed.js";
import { EventKernel } from "./event-kernel.js";
import { loadHistory, pushUserMessage } from "./history.js";
import {
  forgetHistory,
  type KeptSession,
  keepHistory,
  keptSession,
  takeHistory,
} from "./history-cache.js";
import { SamplingSettings, withSampling } from "./modes/agent-sampling.js";
import { chatAgentTools } from "./modes/chat-agent-tools.js";
import { dualAgent } from "./modes/dual-agent.js";
import { type OpenedSession, openSession } from "./open-session.js";
import { runRounds } from "./run-rounds.js";
import type { ModeStrategy, TurnContext } from "./turn-context.js";
import { TurnEventStream } from "./turn-event-stream.js";
import { endFailedTurn } from "./turn-failure.js";
import { claimTurn } from "./turn-lock.js";
import { notifyTurnEnded } from "./turn-observers.js";
import { prepareTurn, type TurnProviders } from "./turn-providers.js";
import { TurnRecords } from "./turn-records.js";

export interface RunTurnOptions {
  store: SessionStore;
  message: string;
  /** An existing session to continue, or the id for a new one; a fresh id when absent. */
  session_id?: string;
  /** For a new session; default: the start of the message. */
  title?: string;
  /** For a new session. For an existing one, only its mode is checked (the mode is locked). */
  config?: LabSessionConfigInput;
  /** Cancels the turn: the model stream and the tools stop, partial work is kept. */
  signal?: AbortSignal;
  /** Where models and tools come from (the composition root builds these). */
  providers: TurnProviders;
  /** Models to use instead of building them from the config (kept across turns by a caller). */
  models?: { chat?: ChatModel; event?: ChatModel };
  /**
   * Decides calls to tools that require approval (`mock_ticket` by default). Without one, such a
   * call is denied (decided_by `policy`): a library caller that asks nobody gets no side effects.
   */
  approve?: Approver;
  /**
   * When the turn's work began (`performance.now()`), if before this call: a gateway turn's first
   * model call starts the moment its request arrives, before the runtime is asked, and the turn's
   * wall time must hold that call's. Default: when the turn is claimed.
   */
  started_at?: number;
  /**
   * The chat agent's sampling settings for this turn, in place of those its session's config
   * names (a gateway request's own: each request says how it wants to be answered). Recorded in
   * the turn_start audit row.
   */
  chat_sampling?: SamplingSettings;
}

const UserMessage = z.string().trim().min(1, "the message is empty");

/**
 * `parseInput(UserMessage, …)`: a string that is not blank once trimmed is what the schema gives
 * (its `trim` is String's); anything else goes to the schema, whose refusal is the one thrown.
 */
function userMessage(value: unknown): string {
  const trimmed = typeof value === "string" ? value.trim() : "";
  return trimmed.length > 0 ? trimmed : parseInput(UserMessage, value, "message");
}

const STRATEGIES: Record<LabSessionConfig["tool_invocation_mode"], ModeStrategy> = {
  chat_agent_tools: chatAgentTools,
  dual_agent: dualAgent,
};

/**
 * Runs one turn and reports it as it happens. Refusals before the turn starts (bad config, another
 * mode, a turn already running) throw; once the turn has started every outcome, failure and
 * cancellation included, is stored and reported, ending with one `turn_end` event. Stopping the
 * iteration early cancels the turn.
 */
export function runTurn(options: RunTurnOptions): AsyncGenerator<TurnEvent, void, undefined> {
  return new TurnEventStream<TurnEvent>((emit) => {
    const abort: TurnAbort = { controller: new AbortController(), cancelled: false };
    const cancel = (reason: unknown) => {
      abort.cancelled = true;
      abort.controller.abort(reason);
    };
    const onAbort = () => cancel(options.signal?.reason);
    if (options.signal?.aborted) onAbort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const done = driveTurn(options, abort, emit).finally(() =>
      options.signal?.removeEventListener("abort", onAbort),
    );
    return { done, stop: cancel };
  });
}

/**
 * One controller stops a turn's work, whatever the cause: the user's cancellation (or the
 * consumer leaving), which also marks the turn cancelled, or a failure after the claim (`abandon`
 * in the turn's context), which does not. One signal a turn instead of a second controller
 * chained to the first by a listener.
 */
interface TurnAbort {
  controller: AbortController;
  /** Whether the user cancelled (the only cause before the claim). */
  cancelled: boolean;
}

async function driveTurn(
  options: RunTurnOptions,
  abort: TurnAbort,
  emit: (event: TurnEvent) => void,
): Promise<void> {
  const { store } = options;
  const { signal } = abort.controller;
  const message = userMessage(options.message);
  // Refused before anything is stored, as a bad message is.
  const sampling =
    options.chat_sampling === undefined
      ? undefined
      : parseInput(SamplingSettings, options.chat_sampling, "chat_sampling");
  // Models and tools are built before a new session is stored (see openSession).
  const prepare = (config: LabSessionConfig) =>
    prepareTurn(config, options.providers, { models: options.models, signal });
  const start = async (kept: KeptSession | null) => {
    const opened = await openSession(options, prepare, kept);
    return { opened, ...(await claimOpened(store, opened, message, sampling)) };
  };
  const asLeft = options.session_id === undefined ? null : keptSession(store, options.session_id);
  let started: Awaited<ReturnType<typeof start>>;
  try {
    started = await start(asLeft);
  } catch (error) {
    // The session as this process's last turn left it may be no more: written since (the claim
    // refused it), deleted, or made anew with a config this process cannot prepare. Whatever
    // failed, the turn starts again from the session as stored, and that attempt's outcome is
    // the turn's.
    if (asLeft === null || options.session_id === undefined) throw error;
    forgetHistory(store, options.session_id);
    started = await start(null);
  }
  const { opened, claim, config } = started;
  const {
    sessionId,
    config: sessionConfig,
    updated_at,
    incarnation,
    prepared: { chat_model, event_model, tools },
  } = opened;
  const { turn_index } = claim;
  // This process's last turn of the session, when nothing was written since (history-cache.ts).
  const kept = takeHistory(store, sessionId, { ...claim, updated_at, incarnation });
  // Handed over once (the cache let go of it): extended in place, not copied, at any length.
  if (kept !== null) pushUserMessage(kept, { role: "user", content: message, tool_calls: [] });
  const startedAt = options.started_at ?? performance.now();
  // Time spent waiting for approvals is a person's, not the lab's: every wall time leaves it out.
  const pauses = new PauseClock();
  const records = new TurnRecords(store, sessionId, turn_index);
  try {
    await runClaimedTurn(options, abort, emit, {
      records,
      kept,
      sessionId,
      incarnation,
      turn_index,
      startedAt,
      pauses,
      config,
      session_config: sessionConfig,
      chat_model,
      event_model,
      tools,
    });
  } catch (error) {
    // Whatever threw after the claim (a database refusal, a bug), the turn ends here, as failed.
    const wall_time_ms = elapsedSince(startedAt + pauses.total_ms());
    await endFailedTurn(store, sessionId, turn_index, wall_time_ms, error, emit, records);
  } finally {
    claim.release();
  }
  const observed = notifyTurnEnded({ store, session_id: sessionId, turn_index });
  if (observed) await observed;
}

type PreparedTurn = Awaited<ReturnType<typeof prepareTurn>>;

/**
 * Claims the turn in the opened session, its turn_start row written with the claim (a turn starts
 * with one commit). Refusals (a turn already running, the database refusing the claim, the
 * session changed since it was taken as kept) throw: no turn started.
 */
async function claimOpened(
  store: SessionStore,
  opened: OpenedSession<PreparedTurn>,
  message: string,
  sampling: SamplingSettings | undefined,
) {
  const { sessionId, config: sessionConfig, expected } = opened;
  const { chat_model, event_model, tools } = opened.prepared;
  const config =
    sampling === undefined
      ? sessionConfig
      : { ...sessionConfig, chat_agent: withSampling(sessionConfig.chat_agent, sampling) };
  const strategy = STRATEGIES[config.tool_invocation_mode];
  const claim = await claimTurn(
    store,
    sessionId,
    message,
    {
      event: "turn_start",
      details: {
        mode: config.tool_invocation_mode,
        chat_model: `${chat_model.provider}:${chat_model.model}`,
        event_model: `${event_model.provider}:${event_model.model}`,
        simulated: chat_model.simulated || event_model.simulated,
        tools: tools.names(),
        max_rounds: config.max_rounds,
        // What every round of this turn sends as the system message (dual_agent: with the catalog).
        system_prompt: strategy.systemPrompt({ config, tools }),
        ...(sampling === undefined ? {} : { chat_sampling: sampling }),
      },
    },
    expected,
  );
  return { claim, config };
}

interface ClaimedTurnSetup {
  records: TurnRecords;
  /** The history up to this turn's user message, when kept from the last turn (else read). */
  kept: ChatMessage[] | null;
  sessionId: string;
  /** The session's incarnation, as read or kept before the claim (null: none could be read). */
  incarnation: number | null;
  turn_index: number;
  startedAt: number;
  pauses: PauseClock;
  /** The turn's config: the session's, with a request's own sampling when it gave one. */
  config: LabSessionConfig;
  /** The session's stored config, as the next turn may take it (history-cache.ts). */
  session_config: LabSessionConfig;
  chat_model: ChatModel;
  event_model: ChatModel;
  tools: ToolRegistry;
}

async function runClaimedTurn(
  options: RunTurnOptions,
  abort: TurnAbort,
  emit: (event: TurnEvent) => void,
  setup: ClaimedTurnSetup,
): Promise<void> {
  const { store } = options;
  const { records, sessionId, turn_index, startedAt, pauses, config } = setup;
  const { chat_model, event_model, tools } = setup;
  // Read after the claim, so no other turn can land between this history and this turn; it ends
  // with the user message the claim stored.
  const history = setup.kept ?? (await loadHistory(store, sessionId));
  const before = history.length;
  const audit = (event: string, details: Record<string, unknown>, round_index?: number) =>
    records.audit(event, details, round_index);
  // Failures stop the tools too, not only cancellation; `abort.cancelled` says the user cancelled.
  const { signal } = abort.controller;
  const context: TurnContext = {
    store,
    session_id: sessionId,
    turn_index,
    mode: config.tool_invocation_mode,
    config,
    chat_model,
    event_model,
    tools,
    kernel: new EventKernel({
      records,
      session_id: sessionId,
      turn_index,
      tools,
      signal,
      max_result_chars: config.limits.max_tool_result_chars,
      emit,
      audit,
      approvals: {
        approve: options.approve,
        overrides: config.approvals,
        timeout_ms: config.approval_timeout_ms,
        pauses,
      },
    }),
    signal,
    cancelled: () => abort.cancelled,
    abandon: () => abort.controller.abort(new Error("the turn failed")),
    emit,
    audit,
    records,
  };
  emit({
    type: "turn_start",
    session_id: sessionId,
    turn_index,
    mode: config.tool_invocation_mode,
    simulated: chat_model.simulated || event_model.simulated,
  });

  const { status, answer } = await runRounds(
    context,
    STRATEGIES[config.tool_invocation_mode],
    history,
  );

  const approval_wait_ms = pauses.total_ms();
  const wall_time_ms = elapsedSince(startedAt + approval_wait_ms);
  // The last round's rows, the turn's end (its audit row and completion) and its roll-up: one
  // write, and one read of this turn's calls only.
  await records.flush({
    rollup: true,
    end: {
      status,
      wall_time_ms,
      details: { status, wall_time_ms, ...(approval_wait_ms > 0 ? { approval_wait_ms } : {}) },
    },
  });
  const usage = records.rollup(wall_time_ms);
  // The time the turn's end was written at is the session's updated_at it left: no read back.
  const { updated_at } = records;
  if (updated_at !== null) {
    const { incarnation } = setup;
    keepHistory(
      store,
      sessionId,
      { turn_index, updated_at, incarnation, history, config: setup.session_config },
      history.slice(before),
    );
  }
  emit({
    type: "turn_end",
    session_id: sessionId,
    turn_index,
    status,
    answer,
    wall_time_ms,
    usage,
  });
}
