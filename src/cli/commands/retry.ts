import type { Command } from "commander";
import type { ApprovalPolicy } from "../../domain/approvals.js";
import { InvalidInputError } from "../../domain/errors.js";
import { retryableTurn } from "../../runtime/turn-retry.js";
import { approvalPolicyOf, cliApprover, stdinAsker } from "../approval-prompt.js";
import type { CommandContext } from "../command-context.js";
import { openStoreForWriting } from "../database-path.js";
import { exitCodeOf } from "../derived-session-options.js";
import { TurnPrinter } from "../turn-printer.js";
import { runTurnReport } from "../turn-session.js";

interface RetryFlags {
  turn?: string;
  approve?: ApprovalPolicy;
}

export function registerRetryCommand(program: Command, context: CommandContext): void {
  program
    .command("retry")
    .description(
      "Run a failed, cancelled, interrupted or max_rounds turn again: a new turn of the same session with the same user message; the old turn is kept.",
    )
    .argument("<session>", "the session's id")
    .option("--turn <n>", "the turn to retry (default: the last one)")
    .option("--approve <policy>", "calls to tools that require approval: all, none or ask")
    .addHelpText(
      "after",
      `
A completed turn is refused. The new turn is printed as run prints one.

Examples:
  $ agent-lab retry 3f1c…
  $ agent-lab retry 3f1c… --turn 2 --approve all`,
    )
    .action(async (sessionId: string, flags: RetryFlags, command: Command) => {
      const { io } = context;
      const turnIndex = flags.turn === undefined ? undefined : Number(flags.turn);
      if (flags.turn !== undefined && (!/^\d+$/.test(flags.turn) || turnIndex === 0)) {
        throw new InvalidInputError(
          `--turn: expected a whole number >= 1, got ${JSON.stringify(flags.turn)}`,
        );
      }
      const providers = context.providers(command);
      const store = openStoreForWriting(context.database(command), io.stderr);
      const controller = new AbortController();
      const onSignal = () => controller.abort(new Error("cancelled by SIGINT"));
      process.on("SIGINT", onSignal);
      const asker = stdinAsker(io);
      try {
        const turn = await retryableTurn(store, sessionId, turnIndex);
        io.stdout.write(
          `retrying turn ${turn.turn_index} (${turn.status}): ${turn.user_message}\n`,
        );
        const printer = new TurnPrinter(io);
        const report = await runTurnReport(
          {
            store,
            providers,
            session_id: sessionId,
            message: turn.user_message,
            signal: controller.signal,
            approve: cliApprover(approvalPolicyOf(flags.approve, io), () => asker.ask),
          },
          printer,
        );
        printer.footer(report);
        context.exitCode = exitCodeOf([report]);
      } finally {
        process.off("SIGINT", onSignal);
        asker.close();
        store.close();
        await providers.tools.close();
      }
    });
}
