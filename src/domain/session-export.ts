import { z } from "zod";
import { ToolCallEvent } from "./events.js";
import { boundedRecord, WellFormedString } from "./json-limits.js";
import { checkMessageProtocol, MessageRole } from "./messages.js";
import type {
  AuditRecord,
  MessageRecord,
  SessionRecord,
  TurnRecord,
  TurnRecordStatus,
} from "./records.js";
import { checkStorableConfig, modeOf, ToolInvocationMode } from "./session-config.js";
import { SessionId } from "./session-id.js";
import {
  AgentRole,
  CallKind,
  type TurnUsageRollup,
  type UsageCallRecord,
  type UsageRollup,
  UsageSource,
  type UsageSummary,
} from "./usage.js";

/**
 * One session as a self-contained JSON document: what `exportSession` writes and `importSession`
 * reads back. Every record keeps the store's snake_case shape; ids of messages, audit entries and
 * calls are the exporting file's and are renumbered on import. `usage.turns` and `usage.session`
 * are derived from the calls and turns, so an import checks their shape and recomputes them.
 *
 * Version 2 adds each message's `reasoning` and `refusal` and each call's provider detail
 * (reasoning and cache-write tokens, usage source, reported and estimated cost, served model, id,
 * fingerprint, finish reason, refusal, raw usage). Version-1 documents still import: the fields
 * they lack read as a store's legacy rows do (0, null, false; the source from `estimated`).
 *
 * Captured call payloads (request bodies and raw streams, `getCallPayload`) are not part of the
 * document: they are diagnostics of one machine's runs, ~10 KB compressed and ~100 KB as JSON text
 * per call (a long session would export tens of megabytes of mostly repeated history), and the
 * usage records already carry every figure. An imported session's calls have no payload.
 */
export const SESSION_EXPORT_FORMAT = "agent-lab.session";
export const SESSION_EXPORT_VERSION = 2;
/** The versions `importSession` reads. */
export const SESSION_EXPORT_VERSIONS = [1, 2] as const;

const timestamp = z.string().min(1);
const rowId = z.number().int().nonnegative();
const index = z.number().int().positive();
const tokens = z.number().int().nonnegative();
const milliseconds = z.number().finite().nonnegative();

export const ExportedSession = z.strictObject({
  id: SessionId,
  title: WellFormedString,
  created_at: timestamp,
  updated_at: timestamp,
  tool_invocation_mode: ToolInvocationMode,
  config: z.record(z.string(), z.unknown()),
});

const TurnStatusSchema = z.enum([
  "running",
  "completed",
  "cancelled",
  "failed",
  "max_rounds",
  "interrupted",
]) satisfies z.ZodType<TurnRecordStatus>;

export const ExportedTurn = z.strictObject({
  turn_index: index,
  user_message: WellFormedString,
  started_at: timestamp,
  completed_at: timestamp.nullable(),
  wall_time_ms: milliseconds.nullable(),
  status: TurnStatusSchema,
  runner: z.string().min(1).nullable(),
});

export const ExportedMessage = z
  .strictObject({
    id: rowId,
    session_id: z.string(),
    turn_index: index,
    role: MessageRole,
    content: z.string(),
    name: z.string().min(1).nullable(),
    tool_call_id: z.string().min(1).nullable(),
    tool_calls: z.array(ToolCallEvent),
    // Version 2; absent from version-1 documents.
    reasoning: z.string().nullable().default(null),
    refusal: z.string().nullable().default(null),
    created_at: timestamp,
  })
  .superRefine(checkMessageProtocol);

export const ExportedAudit = z.strictObject({
  id: rowId,
  session_id: z.string(),
  turn_index: index.nullable(),
  round_index: index.nullable(),
  event: z.string().min(1),
  details: boundedRecord(),
  created_at: timestamp,
});

const costUsd = z.number().finite().nonnegative().nullable().default(null);
const detail = (max: number) => z.string().max(max).nullable().default(null);

/**
 * A version-1 call says only whether it was estimated: its source is derived before validation
 * (a preprocess, not a transform, so the JSON Schema of the output stays representable).
 */
function withUsageSource(value: unknown): unknown {
  if (value === null || typeof value !== "object" || "usage_source" in value) return value;
  const estimated = (value as { estimated?: unknown }).estimated === true;
  return { ...value, usage_source: estimated ? "estimated" : "endpoint" };
}

export const ExportedCall = z.preprocess(
  withUsageSource,
  z.strictObject({
    id: rowId,
    turn_index: index,
    round_index: index,
    prompt_tokens: tokens,
    completion_tokens: tokens,
    total_tokens: tokens,
    cached_tokens: tokens,
    ttft_ms: milliseconds.nullable(),
    elapsed_ms: milliseconds,
    mode: ToolInvocationMode,
    agent: AgentRole,
    call_kind: CallKind,
    event_id: z.string().min(1).nullable(),
    event_name: z.string().min(1).nullable(),
    used_fallback: z.boolean(),
    tool_latency_ms: milliseconds.nullable(),
    metric_key: z.string().min(1).nullable(),
    // Absent from documents written before the lab recorded estimates.
    estimated: z.boolean().default(false),
    // Version 2; absent from version-1 documents.
    reasoning_tokens: tokens.default(0),
    cache_write_tokens: tokens.default(0),
    usage_source: UsageSource,
    cost_usd: costUsd,
    cost_estimated_usd: costUsd,
    response_model: detail(500),
    response_id: detail(500),
    system_fingerprint: detail(500),
    finish_reason: detail(100),
    refusal: z.boolean().default(false),
    raw_usage: z.record(z.string(), z.unknown()).nullable().default(null),
    created_at: timestamp,
  }),
);

const rollupShape = {
  prompt_tokens: tokens,
  completion_tokens: tokens,
  total_tokens: tokens,
  cached_tokens: tokens,
  elapsed_ms: milliseconds,
  call_count: tokens,
  fallback_count: tokens,
  tool_count: tokens,
  estimated_count: tokens.default(0),
  reasoning_tokens: tokens.default(0),
  cache_write_tokens: tokens.default(0),
  cost_usd: z.number().finite().nonnegative().nullable().default(null),
  reported_cost_count: tokens.default(0),
  unpriced_count: tokens.default(0),
  turn_wall_time_ms: milliseconds.nullable(),
};
const ExportedRollup = z.strictObject(rollupShape);
const ExportedTurnRollup = z.strictObject({ turn_index: index, ...rollupShape });

export const ExportedUsage = z.strictObject({
  calls: z.array(ExportedCall),
  turns: z.array(ExportedTurnRollup),
  session: ExportedRollup,
});

export const SessionExportDocument = z
  .strictObject({
    format: z.literal(SESSION_EXPORT_FORMAT),
    version: z.union(SESSION_EXPORT_VERSIONS.map((version) => z.literal(version))),
    exported_at: timestamp,
    session: ExportedSession,
    turns: z.array(ExportedTurn),
    messages: z.array(ExportedMessage),
    audit: z.array(ExportedAudit),
    usage: ExportedUsage,
  })
  .superRefine((document, context) => {
    // The store's rules for configs: no secrets, and the mode the record states is the config's.
    checkStorableConfig(document.session.config, context, ["session", "config"]);
    const mode = modeOf(document.session.config);
    if (document.session.tool_invocation_mode !== mode) {
      context.addIssue({
        code: "custom",
        path: ["session", "tool_invocation_mode"],
        message: `is ${document.session.tool_invocation_mode} but the config's mode is ${mode}`,
      });
    }
    const turnIndexes = new Set<number>();
    document.turns.forEach((turn, position) => {
      if (turnIndexes.has(turn.turn_index)) {
        context.addIssue({
          code: "custom",
          path: ["turns", position, "turn_index"],
          message: `turn ${turn.turn_index} appears twice`,
        });
      }
      turnIndexes.add(turn.turn_index);
    });
    const requireTurn = (turnIndex: number, path: (string | number)[]) => {
      if (!turnIndexes.has(turnIndex)) {
        context.addIssue({
          code: "custom",
          path,
          message: `turn ${turnIndex} is not one of the document's turns`,
        });
      }
    };
    document.messages.forEach((message, position) => {
      requireTurn(message.turn_index, ["messages", position, "turn_index"]);
    });
    const metricKeys = new Set<string>();
    document.usage.calls.forEach((call, position) => {
      requireTurn(call.turn_index, ["usage", "calls", position, "turn_index"]);
      if (call.metric_key === null) return;
      if (metricKeys.has(call.metric_key)) {
        context.addIssue({
          code: "custom",
          path: ["usage", "calls", position, "metric_key"],
          message: `metric key ${call.metric_key} appears twice`,
        });
      }
      metricKeys.add(call.metric_key);
    });
  });

/** The document as `exportSession` returns it, typed with the store's own records. */
export interface SessionExport {
  format: typeof SESSION_EXPORT_FORMAT;
  version: typeof SESSION_EXPORT_VERSION;
  exported_at: string;
  session: SessionRecord;
  turns: TurnRecord[];
  messages: MessageRecord[];
  audit: AuditRecord[];
  usage: UsageSummary;
}

export type SessionExportInput = z.input<typeof SessionExportDocument>;
export type ParsedSessionExport = z.output<typeof SessionExportDocument>;

/** Options of `importSession`. */
export const ImportSessionOptions = z.strictObject({
  /** The id of the imported session; default the document's own session id. */
  session_id: SessionId.optional(),
});
export type ImportSessionOptions = z.input<typeof ImportSessionOptions>;

// Compile-time checks that the schema and the records describe the same shapes, both ways.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const shapesAgree: [
  Same<z.output<typeof ExportedSession>, SessionRecord>,
  Same<z.output<typeof ExportedTurn>, TurnRecord>,
  Same<z.output<typeof ExportedMessage>, MessageRecord>,
  Same<z.output<typeof ExportedAudit>, AuditRecord>,
  Same<z.output<typeof ExportedCall>, UsageCallRecord>,
  Same<z.output<typeof ExportedRollup>, UsageRollup>,
  Same<z.output<typeof ExportedTurnRollup>, TurnUsageRollup>,
] = [true, true, true, true, true, true, true];
void shapesAgree;

/**
 * A document's turns as an import writes them. A turn exported while it ran is nobody's to finish
 * in the copy: its runner (a process of the lab that exported it, which may live on) would hold
 * the imported session's lock until that process ended, with no way to cancel it. It arrives
 * interrupted, as of the export.
 */
export function importedTurns(document: ParsedSessionExport): ParsedSessionExport["turns"] {
  return document.turns.map((turn) =>
    turn.status === "running"
      ? { ...turn, status: "interrupted", completed_at: turn.completed_at ?? document.exported_at }
      : turn,
  );
}
