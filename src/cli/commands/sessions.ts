import type { Command } from "commander";
import { InvalidInputError } from "../../domain/errors.js";
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from "../../domain/pagination.js";
import { type SessionPage, SessionQuery } from "../../domain/session-query.js";
import { parseInput } from "../../domain/validation.js";
import type { CommandContext } from "../command-context.js";
import { openStoreForReading } from "../database-path.js";
import { formatCount, formatTable, formatTimestamp, truncate, writeJson } from "../output.js";

interface SessionsFlags {
  json?: boolean;
  limit?: string;
  cursor?: string;
  search?: string;
  mode?: string;
  model?: string;
  tag?: string;
  status?: string;
  experiment?: string;
  includeExperiments?: boolean;
  since?: string;
  until?: string;
}

/** The flags by the query parameter each one sets, so a refusal names the flag the user typed. */
const FLAG_OF: Record<string, string> = {
  q: "--search",
  updated_from: "--since",
  updated_to: "--until",
};

function queryOf(flags: SessionsFlags): SessionQuery {
  const query = {
    limit: flags.limit,
    cursor: flags.cursor,
    q: flags.search,
    mode: flags.mode,
    model: flags.model,
    tag: flags.tag,
    status: flags.status,
    experiment: flags.experiment,
    // Experiment runs live on the Experiments side; an experiment id asks for its runs.
    experiments:
      flags.includeExperiments === true || flags.experiment !== undefined ? undefined : "exclude",
    updated_from: flags.since,
    updated_to: flags.until,
  };
  const given = Object.fromEntries(
    Object.entries(query).filter(([, value]) => value !== undefined),
  );
  try {
    return parseInput(SessionQuery, given, "sessions");
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    const message = error.message.replace(
      /\b(q|updated_from|updated_to|limit|cursor|mode|model|tag|status|experiment): /g,
      (_, name: string) => `${FLAG_OF[name] ?? `--${name}`}: `,
    );
    throw new InvalidInputError(message);
  }
}

export function registerSessionsCommand(program: Command, context: CommandContext): void {
  program
    .command("sessions")
    .description(
      "List the sessions in the lab's database, most recently updated first, a page at a time.",
    )
    .option("--json", "print the page as JSON: { sessions, next_cursor }")
    .option(
      "--limit <n>",
      `sessions per page, 1 to ${MAX_PAGE_LIMIT} (default ${DEFAULT_PAGE_LIMIT})`,
    )
    .option("--cursor <cursor>", "the next page: the cursor the previous page printed")
    .option("--search <text>", "titles containing this text (case-insensitive)")
    .option("--mode <mode>", "chat_agent_tools or dual_agent")
    .option(
      "--model <model>",
      "the chat or the event agent's model string, e.g. openai:gpt-4.1-mini",
    )
    .option("--tag <tag>", "sessions carrying this tag (config tags)")
    .option(
      "--status <status>",
      "the latest turn's status: running, completed, cancelled, failed, max_rounds, interrupted, or none (no turns)",
    )
    .option("--experiment <id>", "the runs of this experiment")
    .option(
      "--include-experiments",
      "also list the sessions experiments ran (hidden by default; see agent-lab bench)",
    )
    .option("--since <time>", "updated at or after: YYYY-MM-DD (UTC) or an ISO 8601 time")
    .option(
      "--until <time>",
      "updated at or before: YYYY-MM-DD (the whole day) or an ISO 8601 time",
    )
    .addHelpText(
      "after",
      `
Filters combine (AND). When more sessions match than one page holds, the last line gives the
command for the next page; with --json, pass next_cursor as --cursor (null on the last page).

Examples:
  $ agent-lab sessions
  $ agent-lab sessions --search flaky --status failed --limit 20
  $ agent-lab sessions --tag nightly --since 2026-11-01
  $ agent-lab sessions --json | jq -r '.sessions[0].id'`,
    )
    .action(async (flags: SessionsFlags, command: Command) => {
      const query = queryOf(flags);
      const location = context.database(command);
      const store = await openStoreForReading(location);
      let page: SessionPage = { sessions: [], next_cursor: null };
      /** Hidden experiment runs match the filters: the empty list says how to see them. */
      let hiddenRuns = false;
      try {
        if (store !== null) page = await store.listSessionPage(query);
        if (store !== null && page.sessions.length === 0 && query.experiments === "exclude") {
          const probe = { ...query, experiments: "only" as const, limit: 1 };
          hiddenRuns = (await store.listSessionPage(probe)).sessions.length > 0;
        }
      } finally {
        await store?.close();
      }
      const { io } = context;
      if (flags.json) {
        writeJson(io, page);
        return;
      }
      const { sessions, next_cursor } = page;
      if (sessions.length === 0) {
        const filtered = Object.keys(query).some((key) => key !== "limit" && key !== "experiments");
        io.stdout.write(
          hiddenRuns
            ? `No sessions ${filtered ? "match" : "yet"} outside experiments; add --include-experiments to list experiment runs.\n`
            : filtered
              ? "No sessions match.\n"
              : `No sessions yet in ${location.label}. Start one with: agent-lab run "search for agent lab"\n`,
        );
        return;
      }
      io.stdout.write(
        `${formatTable(sessions, [
          { header: "ID", value: (session) => session.id },
          { header: "TITLE", value: (session) => truncate(session.title, 40) },
          { header: "TURNS", value: (session) => String(session.turn_count), align: "right" },
          {
            header: "TOKENS",
            value: (session) => formatCount(session.total_tokens),
            align: "right",
          },
          { header: "UPDATED (UTC)", value: (session) => formatTimestamp(session.updated_at) },
        ])}\n`,
      );
      if (next_cursor !== null) {
        io.stdout.write(
          `More sessions: add --cursor ${next_cursor} (with the same filters) for the next page.\n`,
        );
      }
    });
}
