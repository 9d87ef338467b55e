import type { Command } from "commander";
import { InvalidInputError } from "../../domain/errors.js";
import { forkSession } from "../../runtime/session-fork.js";
import type { SessionStore } from "../../store/session-store.js";
import type { CommandContext } from "../command-context.js";
import { openStoreForWriting } from "../database-path.js";
import {
  addDerivedSessionOptions,
  type DerivedSessionFlags,
  derivedConfigOverrides,
} from "../derived-session-options.js";
import { resolveSession } from "../session-id.js";

interface ForkFlags extends DerivedSessionFlags {
  turn: string;
  json?: boolean;
}

export function registerForkCommand(program: Command, context: CommandContext): void {
  const command = program
    .command("fork")
    .description(
      "Copy a session's turns 1..N (messages, usage, audit) into a new session, optionally under another config, and print its id.",
    )
    .argument("<session>", "the source session's id (or a unique prefix of it)")
    .requiredOption("--turn <n>", "the last turn to copy (0: none, only the config)");
  addDerivedSessionOptions(command, '"SOURCE TITLE (fork at turn N)"')
    .option("--json", "print the new session record as JSON")
    .addHelpText(
      "after",
      `
The new session's config is the source's with the flags (and --config's overrides) merged over
it; the mode may change. It records derived_from {kind: fork, session_id, turn_index} and the tag
fork. Continue it with agent-lab run --session NEW_ID.

Examples:
  $ agent-lab fork 3f1c… --turn 2
  $ agent-lab fork 3f1c… --turn 2 --mode chat_agent_tools --model openai:gpt-4.1-mini
  $ agent-lab fork 3f1c… --turn 1 --config overrides.yaml --title "shorter prompt"`,
    )
    .action(async (idOrPrefix: string, flags: ForkFlags, command: Command) => {
      const turn_index = Number(flags.turn);
      if (!/^\d+$/.test(flags.turn) || !Number.isSafeInteger(turn_index)) {
        throw new InvalidInputError(
          `--turn: expected a whole number >= 0, got ${JSON.stringify(flags.turn)}`,
        );
      }
      const config = derivedConfigOverrides(flags);
      const providers = context.providers(command);
      let store: SessionStore;
      try {
        store = await openStoreForWriting(context.database(command), context.io.stderr);
      } catch (error) {
        await providers.tools.close();
        throw error;
      }
      try {
        const sessionId = (await resolveSession(store, idOrPrefix)).id;
        const session = await forkSession({
          store,
          providers,
          source_id: sessionId,
          turn_index,
          title: flags.title,
          config,
        });
        if (flags.json) {
          context.io.stdout.write(`${JSON.stringify(session, null, 2)}\n`);
          return;
        }
        context.io.stdout.write(
          `forked ${sessionId} at turn ${turn_index} into ${session.id} (${session.tool_invocation_mode})\ncontinue it: agent-lab run --session ${session.id} "…"\n`,
        );
      } finally {
        await store.close();
        await providers.tools.close();
      }
    });
}
