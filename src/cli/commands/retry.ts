import type { Command } from "commander";
import type { ApprovalPolicy } from "../../domain/approvals.js";
import { InvalidInputError } from "../../domain/errors.js";
import { retryableTurn } from "../../runtime/turn-retry.js";
import type { CommandContext } from "../command-context.js";
import { exitCodeOf } from "../derived-session-options.js";
import { resolveSession } from "../session-id.js";
import { TurnPrinter } from "../turn-printer.js";
import { withTurnRunner } from "../turn-runner.js";
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
    .argument("<session>", "the session's id (or a unique prefix of it)")
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
    .action(async (idOrPrefix: string, flags: RetryFlags, command: Command) => {
      const { io } = context;
      const turnIndex = flags.turn === undefined ? undefined : Number(flags.turn);
      if (flags.turn !== undefined && (!/^\d+$/.test(flags.turn) || turnIndex === 0)) {
        throw new InvalidInputError(
          `--turn: expected a whole number >= 1, got ${JSON.stringify(flags.turn)}`,
        );
      }
      await withTurnRunner(
        context,
        command,
        flags.approve,
        async ({ store, providers, signal, approve }) => {
          const sessionId = (await resolveSession(store, idOrPrefix)).id;
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
              signal,
              approve,
            },
            printer,
          );
          printer.footer(report);
          context.exitCode = exitCodeOf([report]);
        },
      );
    });
}
