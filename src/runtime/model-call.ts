import { codeOf, OutputLimitError } from "../domain/errors.js";
import { cutMarker } from "../domain/limits.js";
import {
  knownSecretsBlanked,
  redactKnownSecrets,
  redactSecretText,
  SecretTextScrubber,
} from "../domain/secrets.js";
import type { AgentRole, CallKind, TokenUsage } from "../domain/usage.js";
import {
  type ChatModel,
  type ChatModelPart,
  type ChatModelRequest,
  hasBatches,
} from "../providers/chat-model.js";
import { ProviderStreamError } from "../providers/errors.js";
import { recordCall } from "./call-record.js";
import { capturesPayloads } from "./capture-policy.js";
import { CaptureSink } from "./capture-sink.js";
import { type CutCallProgress, estimateCutUsage, producedOutput } from "./cut-call-usage.js";
import { elapsedSince } from "./elapsed.js";
import type { TurnContext } from "./turn-context.js";

export interface AssembledToolCall {
  index: number;
  id: string;
  name: string;
  raw_arguments: string;
}

export interface ModelCallResult {
  /** The answer: never the reasoning, never the refusal. */
  text: string;
  /** The model's thinking, as far as the endpoint showed it ("" when none). */
  reasoning: string;
  /** What the model said when it refused ("" when it did not). */
  refusal: string;
  tool_calls: AssembledToolCall[];
  finish_reason: string;
  usage: TokenUsage;
}

export interface ModelCallSpec {
  model: ChatModel;
  request: ChatModelRequest;
  agent: AgentRole;
  call_kind: CallKind;
  round_index: number;
  metric_key: string;
  event?: { id: string; name: string };
  /** Each text delta as it streams (the dual_agent parser listens here). */
  onText?: (text: string) => void;
  /** Each reasoning and refusal delta: a round keeps them even when the call is cut. */
  onReasoning?: (text: string) => void;
  onRefusal?: (text: string) => void;
}

/**
 * One measured model call: streams it, reports retries, and records it as one usage row with the
 * port's TTFT and elapsed time, plus request and response audit entries (counts and names only,
 * never bodies: those are the call's captured payload, when the session keeps payloads). A stream
 * that fails or is cancelled throws (its typed provider error after an audit entry); when output
 * had streamed by then, the call is still recorded, with token counts estimated from the prompt
 * and that output, and its payload as far as it came.
 */
export async function callModel(
  context: TurnContext,
  spec: ModelCallSpec,
): Promise<ModelCallResult> {
  const { model, request, agent, round_index } = spec;
  const prefix = agent === "chat_agent" ? "chat_agent" : "event_agent";
  await context.audit(
    `${prefix}_request`,
    {
      model: `${model.provider}:${model.model}`,
      simulated: model.simulated,
      messages: request.messages.length,
      tools: (request.tools ?? []).map((tool) => tool.name),
      ...(request.response_format ? { response_format: request.response_format.type } : {}),
      ...(spec.event ? { event_id: spec.event.id, event_name: spec.event.name } : {}),
    },
    round_index,
  );
  const { capture } = context.config;
  const sink = capturesPayloads(capture, model) ? new CaptureSink(capture.max_bytes) : null;
  const progress: CutCallProgress = {
    text: "",
    reasoning: "",
    refusal: "",
    tool_arguments: new Map(),
    started_at: performance.now(),
    first_output_at: null,
  };
  const toolArguments = progress.tool_arguments;
  const toolCalls: AssembledToolCall[] = [];
  let pendingUsage: Extract<ChatModelPart, { type: "usage" }> | null = null;
  const maxOutput = context.config.limits.max_output_chars;
  /** Room left under the output limit: text, reasoning, refusal and tool arguments share it. */
  let room = maxOutput;
  // The call runs on the turn's signal, not one of its own: a cut at the output limit must not
  // cancel the turn, and it need not, since leaving the stream closes the call (every port's
  // `return()` stops its request, ChatModel.stream). A controller and a listener per call cost
  // 1.5-2% of the lab's time a round (runtime bench, builds interleaved).
  /**
   * Text taken but not yet handed to `onText`: the text deltas of one body read go out as one
   * (a streamed answer of 1,000 chunks is a few reads, not 1,000 turn events, each a promise job
   * for every consumer), always before anything that follows them in the stream.
   */
  let heldText = "";
  const releaseText = () => {
    if (heldText === "") return;
    const text = heldText;
    heldText = "";
    spec.onText?.(text);
  };
  const overLimit = () => {
    const error = new OutputLimitError(maxOutput);
    const marker = cutMarker("model output", maxOutput);
    progress.text += marker;
    releaseText();
    spec.onText?.(marker);
    return error;
  };
  /** Takes what fits of a delta; throws at the output limit once what fits is delivered. */
  const take = (delta: string, deliver: (kept: string) => void) => {
    progress.first_output_at ??= elapsedSince(progress.started_at);
    const kept = delta.slice(0, room);
    room -= kept.length;
    if (kept) deliver(kept);
    if (kept.length < delta.length) throw overLimit();
  };
  const chatAgent = agent === "chat_agent";
  // The lab's keys, should the endpoint echo one, never reach the text, the events or the record.
  const scrubbers = {
    text: new SecretTextScrubber(),
    reasoning: new SecretTextScrubber(),
    refusal: new SecretTextScrubber(),
  };
  const takeText = (text: string) => {
    if (text === "") return;
    take(text, (kept) => {
      progress.text += kept;
      heldText += kept;
    });
  };
  const takeAside = (reasoning: boolean, text: string) => {
    if (text === "") return;
    take(text, (kept) => {
      if (reasoning) progress.reasoning += kept;
      else progress.refusal += kept;
      (reasoning ? spec.onReasoning : spec.onRefusal)?.(kept);
      // The event agent's are no one's to watch live; its payload keeps them.
      const type = reasoning ? "reasoning_delta" : "refusal_delta";
      if (chatAgent) context.emit({ type, round_index, text: kept });
    });
  };
  let argumentBlanks = 0;
  /** The output limit cut the call while a scrubber held the beginning of a key. */
  let cutWhileHolding = false;
  /** Keys blanked anywhere in the answer: the raw response holds them, perhaps in pieces. */
  const withholdIfScrubbed = () => {
    const { text, reasoning, refusal } = scrubbers;
    const blanks =
      argumentBlanks + text.blanks + reasoning.blanks + refusal.blanks + (cutWhileHolding ? 1 : 0);
    if (blanks > 0) sink?.expectBlanked(blanks);
  };
  /** What the scrubbers still hold, delivered before the call ends (finished or cut). */
  const flushHeld = () => {
    takeText(scrubbers.text.end());
    takeAside(true, scrubbers.reasoning.end());
    takeAside(false, scrubbers.refusal.end());
  };
  const finish = async (
    part: Extract<ChatModelPart, { type: "finish" }>,
  ): Promise<ModelCallResult> => {
    // A port that finished without usage still spent tokens: counted like a cut call.
    const usage = pendingUsage?.usage ?? estimateCutUsage(request, progress);
    const refused = progress.refusal !== "";
    await recordCall(
      context,
      spec,
      {
        usage,
        source: pendingUsage?.source ?? "estimated",
        cost_usd: pendingUsage?.cost_usd ?? null,
        raw_usage: pendingUsage?.raw ?? null,
        response_model: part.response_model,
        response_id: part.response_id,
        system_fingerprint: part.system_fingerprint,
        finish_reason: part.finish_reason,
        refusal: refused,
        ttft_ms: part.ttft_ms,
        elapsed_ms: part.elapsed_ms,
      },
      sink,
    );
    await context.audit(
      `${prefix}_response`,
      {
        finish_reason: part.finish_reason,
        response_model: part.response_model,
        ttft_ms: part.ttft_ms,
        elapsed_ms: part.elapsed_ms,
        attempts: part.attempts,
        usage,
        tool_calls: toolCalls.map((call) => call.name),
        ...(refused ? { refusal: true } : {}),
      },
      round_index,
    );
    return {
      text: progress.text,
      reasoning: progress.reasoning,
      refusal: progress.refusal,
      tool_calls: toolCalls,
      finish_reason: part.finish_reason,
      usage,
    };
  };
  /**
   * One part. Only a part that needs the store (retry, an estimate, finish) returns a promise to
   * wait for, so the deltas of a long answer cost no promise job here.
   */
  const handle = (part: ChatModelPart): Promise<ModelCallResult | null> | null => {
    if (part.type === "text-delta") {
      takeText(scrubbers.text.push(part.text));
      return null;
    }
    // Whatever comes after the text comes after it for the watchers too.
    releaseText();
    switch (part.type) {
      case "first-token":
        progress.first_output_at = part.ttft_ms;
        return null;
      case "reasoning-delta":
      case "refusal-delta": {
        const reasoning = part.type === "reasoning-delta";
        takeAside(reasoning, scrubbers[reasoning ? "reasoning" : "refusal"].push(part.text));
        return null;
      }
      case "tool-call-delta":
        take(part.arguments_delta, (kept) => {
          toolArguments.set(part.index, (toolArguments.get(part.index) ?? "") + kept);
        });
        return null;
      case "tool-call": {
        progress.first_output_at ??= elapsedSince(progress.started_at);
        // Whole by now: the lab's keys blanked before a tool or the record sees them.
        const raw_arguments = redactKnownSecrets(part.raw_arguments);
        argumentBlanks += knownSecretsBlanked(part.raw_arguments, raw_arguments);
        const streamed = toolArguments.get(part.index)?.length ?? 0;
        const extra = Math.max(0, part.raw_arguments.length - streamed);
        if (extra > room) throw overLimit();
        room -= extra;
        toolArguments.set(part.index, raw_arguments);
        toolCalls.push(raw_arguments === part.raw_arguments ? part : { ...part, raw_arguments });
        return null;
      }
      case "retry": {
        const retry = { ...withoutType(part), reason: redactSecretText(part.reason) };
        context.emit({ type: "retry", round_index, agent, ...retry });
        return context.audit("provider_retry", { agent, ...retry }, round_index).then(() => null);
      }
      case "usage":
        pendingUsage = part;
        if (!part.estimated) return null;
        return context
          .audit(
            "usage_estimated",
            {
              agent,
              reason:
                "the counts are the lab's estimate (the endpoint reported none, or a text was past the tokenizer's exact limit)",
            },
            round_index,
          )
          .then(() => null);
      case "finish":
        flushHeld();
        releaseText();
        withholdIfScrubbed();
        return finish(part);
      case "response-start":
        // A call started before this read it (the gateway's early call): timed from its start.
        if (part.started_at !== undefined && part.started_at < progress.started_at) {
          progress.started_at = part.started_at;
        }
        return null;
      default:
        // A part type added to the port fails to compile here until it is handled.
        part satisfies never;
        return null;
    }
  };
  try {
    const stream = model.stream(request, {
      signal: context.signal,
      ...(sink ? { capture: sink } : {}),
    });
    if (hasBatches(stream)) {
      // The adapter's stream, read a batch (a body read) at a time: no promise per part at all.
      for await (const batch of stream.batches()) {
        for (const part of batch) {
          const pending = handle(part);
          const result = pending === null ? null : await pending;
          if (result !== null) return result;
        }
        releaseText();
      }
    } else {
      for await (const part of stream) {
        const pending = handle(part);
        releaseText();
        const result = pending === null ? null : await pending;
        if (result !== null) return result;
      }
    }
  } catch (error) {
    // The loop left the stream (its `return()` closed the call) or the stream itself failed.
    // At the output limit there is no room for what the scrubbers hold (and `take` would write
    // the cut marker again); otherwise it is the cut call's output, as much of it as fits (the
    // call's own failure is the one reported).
    if (!(error instanceof OutputLimitError)) {
      try {
        flushHeld();
      } catch {
        // Reached the limit: what fitted is in `progress`, marked as cut.
      }
      releaseText();
    } else if (Object.values(scrubbers).some((scrubber) => scrubber.holding)) {
      // Cut while a key's beginning was held: its rest may be in what the capture already read,
      // in pieces no redaction of the raw text finds, so the raw response is not kept.
      cutWhileHolding = true;
    }
    withholdIfScrubbed();
    if (producedOutput(progress)) {
      // The cut is what the caller must see; a store that fails here fails the turn's next write.
      await recordCutCall(
        context,
        spec,
        progress,
        sink,
        context.signal.aborted ? "cancelled" : "failed",
      ).catch(() => {});
    }
    if (!context.signal.aborted) {
      await context.audit(
        `${prefix}_error`,
        {
          code: codeOf(error),
          message: error instanceof Error ? error.message : String(error),
        },
        round_index,
      );
    }
    throw error;
  }
  // The port promises a `finish` part; a model that ends without one has failed.
  throw new ProviderStreamError(
    "no_finish_reason",
    `${model.provider}:${model.model} ended its stream without a finish part`,
  );
}

/**
 * The usage row of a call cut short after output had streamed: the tokens were spent (and billed)
 * even though the endpoint's usage never arrived, so a turn that streamed text never reads 0
 * calls. Same metric key as a finished call; the source `estimated` says where the counts come
 * from, and the price table prices them, so the row is never without a cost where one is known.
 */
async function recordCutCall(
  context: TurnContext,
  spec: ModelCallSpec,
  progress: CutCallProgress,
  sink: CaptureSink | null,
  reason: "cancelled" | "failed",
): Promise<void> {
  await recordCall(
    context,
    spec,
    {
      usage: estimateCutUsage(spec.request, progress),
      source: "estimated",
      cost_usd: null,
      raw_usage: null,
      response_model: null,
      response_id: null,
      system_fingerprint: null,
      finish_reason: null,
      refusal: progress.refusal !== "",
      ttft_ms: progress.first_output_at,
      elapsed_ms: elapsedSince(progress.started_at),
    },
    sink,
  );
  const streamed = progress.text.length + progress.reasoning.length + progress.refusal.length;
  await context.audit(
    "usage_estimated",
    {
      agent: spec.agent,
      metric_key: spec.metric_key,
      reason: `the call was ${reason} before the endpoint reported usage; counted with the o200k_base tokenizer from the prompt and the ${streamed} characters that streamed`,
    },
    spec.round_index,
  );
}

function withoutType<Part extends { type: string }>(part: Part): Omit<Part, "type"> {
  const { type: _type, ...rest } = part;
  return rest;
}
