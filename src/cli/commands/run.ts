import type { Command } from "commander";
import type { LabProviders } from "../../composition/lab-providers.js";
import { approvalPolicyOf, cliApprover, stdinAsker } from "../approval-prompt.js";
import type { CommandContext } from "../command-context.js";
import { openStoreForWriting } from "../database-path.js";
import { writeError, writeJson } from "../output.js";
import { requestedSessionConfig } from "../session-config-options.js";
import { TurnPrinter } from "../turn-printer.js";
import {
  addSessionOptions,
  planSession,
  runTurnReport,
  type SessionFlags,
  unreachableSessionHint,
} from "../turn-session.js";

interface RunFlags extends SessionFlags {
  json?: boolean;
}

/** The shell's convention: 128 + the signal's number. */
const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;
type StopSignal = keyof typeof SIGNAL_EXIT_CODES;

export function registerRunCommand(program: Command, context: CommandContext): void {
  const command = program
    .command("run")
    .description(
      "Run one turn: send MESSAGE to a new session (or the session --session ID names), stream the answer and the tool calls, and record everything in the lab's database.",
    )
    .argument("<message>", "what the user says");
  addSessionOptions(command, "the start of the message")
    .option("--json", "print one JSON object with the answer, tool calls and usage")
    .addHelpText(
      "after",
      `
A new session takes its config from --config and the flags; an existing one (--session ID, or a
unique prefix of its id, as git takes commits) keeps the config it was created with, and its mode
is locked. An id that names no session is refused: --session ID --new creates one with that id. Ctrl-C cancels the turn and keeps what it
produced, marked cancelled (exit code 130). A call to a tool that requires approval (mock_ticket)
waits for --approve: ask prompts "approve mock_ticket {…}? [y/N/e(dit)]" (the default at a
terminal); without a terminal the default is none, which denies it.

Examples:
  $ agent-lab run --approve all "search for agent lab and file a ticket about flaky tests"
  $ agent-lab run --mode chat_agent_tools --json "search for vitest"
  $ agent-lab run --session 3f1c "and now file a ticket about it"
  $ agent-lab run --session flaky-tests --new "search for flaky tests"
  $ OPENAI_API_KEY=… agent-lab run --model openai:gpt-4.1-mini "search for agent lab"
  $ agent-lab run --model openai:llama3.1 --base-url http://127.0.0.1:11434/v1 "hello"`,
    )
    .action(async (message: string, flags: RunFlags, command: Command) => {
      context.exitCode = await runCommand(message, flags, command, context);
    });
}

async function runCommand(
  message: string,
  flags: RunFlags,
  command: Command,
  context: CommandContext,
): Promise<number> {
  const providers = context.providers(command);
  try {
    return await runWithProviders(message, flags, command, context, providers);
  } finally {
    await providers.tools.close();
  }
}

async function runWithProviders(
  message: string,
  flags: RunFlags,
  command: Command,
  context: CommandContext,
  providers: LabProviders,
): Promise<number> {
  const { io } = context;
  // The flags are checked before the database is opened: a refusal leaves no file behind.
  const requested = await requestedSessionConfig(flags, providers);
  const store = await openStoreForWriting(context.database(command), io.stderr);
  const controller = new AbortController();
  let stoppedBy: StopSignal | null = null;
  const onSignal = (signal: StopSignal) => {
    // A second Ctrl-C does not wait for the turn to wind down.
    if (stoppedBy !== null) process.exit(SIGNAL_EXIT_CODES[signal]);
    stoppedBy = signal;
    controller.abort(new Error(`cancelled by ${signal}`));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const asker = stdinAsker(io);
  try {
    const plan = await planSession(store, flags, requested, io);
    const { config, session_id } = plan;
    const printer = flags.json ? null : new TurnPrinter(io);
    const report = await runTurnReport(
      {
        store,
        message,
        ...(session_id !== undefined ? { session_id } : {}),
        ...(flags.title !== undefined ? { title: flags.title } : {}),
        ...(config !== undefined ? { config } : {}),
        signal: controller.signal,
        providers,
        approve: cliApprover(approvalPolicyOf(flags.approve, io), () => asker.ask),
      },
      printer,
    );
    if (flags.json) writeJson(io, report);
    else printer?.footer(report);
    if (report.status === "failed") {
      writeError(io, report.error?.message ?? `turn ${report.turn_index} failed`);
      const hint = unreachableSessionHint(plan, report);
      if (hint !== null) writeError(io, hint);
      return 1;
    }
    if (report.status === "cancelled") {
      writeError(
        io,
        `turn ${report.turn_index} of session ${report.session_id} was cancelled; what it produced is stored`,
      );
      return SIGNAL_EXIT_CODES[stoppedBy ?? "SIGINT"];
    }
    return 0;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    asker.close();
    await store.close();
  }
}
