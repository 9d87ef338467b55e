import type { Command } from "commander";
import { SessionNotFoundError } from "../../domain/errors.js";
import type {
  AuditRecord,
  MessageRecord,
  SessionRecord,
  TurnRecord,
} from "../../domain/records.js";
import { LabSessionConfig } from "../../domain/session-config.js";
import type { CommandContext } from "../command-context.js";
import { openStoreForReading } from "../database-path.js";
import {
  agentModels,
  type CliIo,
  formatCount,
  formatMs,
  formatTimestamp,
  terminalSafe,
  truncate,
  writeJson,
} from "../output.js";
import { resolveSession } from "../session-id.js";

interface Transcript {
  session: SessionRecord;
  messages: MessageRecord[];
  audit: AuditRecord[];
  turns: TurnRecord[];
}

export function registerShowCommand(program: Command, context: CommandContext): void {
  program
    .command("show")
    .description("Show a session: its config and the conversation, turn by turn.")
    .argument("<session>", "the session id, or a unique prefix of it (see agent-lab sessions)")
    .option("--json", "print { session, messages, audit }: the records, audit trail included")
    .option(
      "--reasoning",
      "print each answer's reasoning in full (collapsed to its length otherwise)",
    )
    .addHelpText(
      "after",
      `
A model's reasoning (its thinking, kept beside the answer) is shown as one line with its length;
--reasoning prints it. A refusal is marked "refused:".

Examples:
  $ agent-lab show 3f1c…
  $ agent-lab show 3f1c… --reasoning
  $ agent-lab show 3f1c… --json | jq '.audit[] | .event'`,
    )
    .action(
      async (
        sessionId: string,
        flags: { json?: boolean; reasoning?: boolean },
        command: Command,
      ) => {
        const store = await openStoreForReading(context.database(command));
        if (store === null) throw new SessionNotFoundError(sessionId);
        let transcript: Transcript;
        try {
          const session = await resolveSession(store, sessionId);
          transcript = {
            session,
            messages: await store.listMessages(session.id),
            audit: await store.listAuditLogs(session.id),
            turns: await store.listTurns(session.id),
          };
        } finally {
          await store.close();
        }
        if (flags.json) {
          const { session, messages, audit } = transcript;
          writeJson(context.io, { session, messages, audit });
        } else {
          printTranscript(context.io, transcript, flags.reasoning === true);
        }
      },
    );
}

function printTranscript(
  io: CliIo,
  { session, messages, turns, audit }: Transcript,
  fullReasoning: boolean,
): void {
  const config = LabSessionConfig.safeParse(session.config);
  const models = config.success
    ? agentModels(session.tool_invocation_mode, config.data)
    : "config not readable as a lab config";
  const lines = [
    `Session ${session.id}: ${session.title}`,
    `mode ${session.tool_invocation_mode} · ${models}`,
    `created ${formatTimestamp(session.created_at)} UTC · updated ${formatTimestamp(session.updated_at)} UTC`,
  ];
  const byTurn = new Map<number, MessageRecord[]>();
  for (const message of messages) {
    const list = byTurn.get(message.turn_index) ?? [];
    list.push(message);
    byTurn.set(message.turn_index, list);
  }
  const turnIndexes = [
    ...new Set([...turns.map((turn) => turn.turn_index), ...byTurn.keys()]),
  ].sort((a, b) => a - b);
  if (turnIndexes.length === 0) lines.push("", "No turns yet.");
  for (const turnIndex of turnIndexes) {
    const turn = turns.find((candidate) => candidate.turn_index === turnIndex);
    const status = turn ? ` · ${turn.status} · wall ${formatMs(turn.wall_time_ms)}` : "";
    lines.push("", `── turn ${turnIndex}${status}`);
    for (const message of byTurn.get(turnIndex) ?? []) {
      lines.push(...renderMessage(message, fullReasoning));
    }
    // A failed turn says why (its turn_failed audit row), so the reader need not dig for it.
    const failure = audit.find(
      (row) => row.event === "turn_failed" && row.turn_index === turnIndex,
    );
    if (failure !== undefined)
      lines.push(`error (${String(failure.details.code)}): ${String(failure.details.message)}`);
  }
  // Titles, messages and model names come from models, tools and imports.
  io.stdout.write(`${terminalSafe(lines.join("\n"))}\n`);
}

function renderMessage(message: MessageRecord, fullReasoning: boolean): string[] {
  switch (message.role) {
    case "tool":
      return [`  ← ${message.name ?? "tool"}: ${truncate(message.content, 200)}`];
    case "assistant":
      return [
        ...reasoningLines(message.reasoning, fullReasoning),
        ...(message.content ? [`assistant: ${message.content}`] : []),
        ...(message.refusal ? [`assistant refused: ${message.refusal}`] : []),
        ...message.tool_calls.map(
          (call) => `  → ${call.name} ${truncate(JSON.stringify(call.arguments), 160)}`,
        ),
      ];
    default:
      return [`${message.role}: ${message.content}`];
  }
}

function reasoningLines(reasoning: string | null, full: boolean): string[] {
  if (!reasoning) return [];
  if (!full) return [`  thinking… (${formatCount(reasoning.length)} chars; --reasoning shows it)`];
  return ["  thinking:", ...reasoning.split("\n").map((line) => `  │ ${line}`)];
}
