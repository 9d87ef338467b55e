import type { Command } from "commander";
import type { ApprovalPolicy } from "../../domain/approvals.js";
import type { TurnEvent } from "../../domain/turn-events.js";
import { prepareReplay, runReplay } from "../../runtime/session-replay.js";
import type { CommandContext } from "../command-context.js";
import {
  addDerivedSessionOptions,
  type DerivedSessionFlags,
  derivedConfigOverrides,
  exitCodeOf,
} from "../derived-session-options.js";
import { resolveSession } from "../session-id.js";
import { TurnPrinter } from "../turn-printer.js";
import { type TurnReport, TurnReportBuilder } from "../turn-report.js";
import { withTurnRunner } from "../turn-runner.js";

interface ReplayFlags extends DerivedSessionFlags {
  approve?: ApprovalPolicy;
}

export function registerReplayCommand(program: Command, context: CommandContext): void {
  const command = program
    .command("replay")
    .description(
      "Run a session's user messages again, in order, as a new session under another config (model, mode, prompt, tools); print each turn as run does, then how to compare the two.",
    )
    .argument("<session>", "the source session's id (or a unique prefix of it)");
  addDerivedSessionOptions(command, '"SOURCE TITLE (replay)"')
    .option("--approve <policy>", "calls to tools that require approval: all, none or ask")
    .addHelpText(
      "after",
      `
The new session records derived_from {kind: replay, session_id, turn_index: 0} and the tag replay.
A failed turn does not stop the replay; Ctrl-C cancels the running turn and stops it, keeping what
ran (exit code 130; 1 when a turn failed).

Examples:
  $ agent-lab replay 3f1c… --mode chat_agent_tools
  $ agent-lab replay 3f1c… --model openai:gpt-4.1-mini --approve all
  $ agent-lab replay 3f1c… --config other-prompt.yaml --title "other prompt"`,
    )
    .action(async (idOrPrefix: string, flags: ReplayFlags, command: Command) => {
      const { io } = context;
      const config = derivedConfigOverrides(flags);
      await withTurnRunner(
        context,
        command,
        flags.approve,
        async ({ store, providers, signal, approve }) => {
          const sessionId = (await resolveSession(store, idOrPrefix)).id;
          const replay = await prepareReplay({
            store,
            providers,
            source_id: sessionId,
            title: flags.title,
            config,
          });
          const printer = new TurnPrinter(io);
          const reports: TurnReport[] = [];
          let builder = new TurnReportBuilder();
          for await (const event of runReplay({
            store,
            providers,
            replay,
            signal,
            approve,
          })) {
            if (event.type === "replay_turn") {
              io.stdout.write(`── turn ${event.turn_index} of ${event.of} ──\n`);
              builder = new TurnReportBuilder();
            } else if (event.type !== "replay" && event.type !== "replay_done") {
              printTurnEvent(event, builder, printer);
              if (event.type === "turn_end") {
                const report = builder.report();
                if (report !== null) {
                  printer.footer(report);
                  reports.push(report);
                }
              }
            }
          }
          const id = replay.session.id;
          io.stdout.write(
            `\nreplayed ${reports.length} of ${replay.messages.length} turns of ${sessionId} into ${id}\ncompare them: run agent-lab serve, then open http://127.0.0.1:4173/compare?a=${sessionId}&b=${id}\n`,
          );
          context.exitCode = exitCodeOf(reports);
        },
      );
    });
}

function printTurnEvent(event: TurnEvent, builder: TurnReportBuilder, printer: TurnPrinter): void {
  builder.add(event);
  printer.print(event);
}
