import { type Command, Option } from "commander";
import type { ApprovalPolicy } from "../domain/approvals.js";
import { InvalidInputError, SessionModeMismatchError } from "../domain/errors.js";
import type { SessionRecord } from "../domain/records.js";
import {
  LabSessionConfig,
  type LabSessionConfigInput,
  type ToolInvocationMode,
} from "../domain/session-config.js";
import type { TurnEvent } from "../domain/turn-events.js";
import type { ChatModel } from "../providers/chat-model.js";
import { type RunTurnOptions, runTurn } from "../runtime/run-turn.js";
import type { ModelProvider } from "../runtime/turn-providers.js";
import type { SessionStore } from "../store/session-store.js";
import { type CliIo, terminalSafe } from "./output.js";
import type { RequestedConfig } from "./session-config-options.js";
import { resolveSession } from "./session-id.js";
import type { TurnPrinter } from "./turn-printer.js";
import { type TurnReport, TurnReportBuilder } from "./turn-report.js";

/**
 * What `run` and `chat` share: the flags that pick or shape a session, how they meet a stored
 * session, and running one turn into a printer and a report.
 */

/** The flags of the commands that run turns. */
export interface SessionFlags {
  session?: string;
  new?: boolean;
  mode?: ToolInvocationMode;
  model?: string;
  eventModel?: string;
  baseUrl?: string;
  config?: string;
  system?: string;
  systemFile?: string;
  title?: string;
  approve?: ApprovalPolicy;
}

/**
 * Adds --session, --new, --mode, --model, --event-model, --base-url, --config, --title and
 * --approve.
 */
export function addSessionOptions(command: Command, titleDefault: string): Command {
  return command
    .option(
      "--session <id>",
      "continue this session: its id, or a unique prefix of it (with --new: create it with this id)",
    )
    .option("--new", "create the session --session names (refused when that id exists)")
    .addOption(
      new Option(
        "--mode <mode>",
        "tool invocation mode of a new session (default: dual_agent)",
      ).choices(["chat_agent_tools", "dual_agent"]),
    )
    .option(
      "--model <spec>",
      "the chat agent's model: sim, sim:NAME or openai:MODEL (default: sim)",
    )
    .option(
      "--event-model <spec>",
      "the event agent's model (default: the chat agent's, as --model sets it, or the --config file's event_agent)",
    )
    .option("--base-url <url>", "the endpoint of the openai: models (chat and event agent)")
    .option("--config <file>", "a JSON session config; the flags above override it")
    .addOption(
      new Option(
        "--system <text>",
        "the chat agent's system prompt (dual_agent still appends the event catalog)",
      ).conflicts("systemFile"),
    )
    .option("--system-file <file>", "read the chat agent's system prompt from a file")
    .option("--title <title>", `a new session's title (default: ${titleDefault})`)
    .addOption(
      new Option(
        "--approve <policy>",
        "calls to tools that require approval (mock_ticket): all, none, or ask at the prompt (default: ask when stdin is a terminal, else none)",
      ).choices(["all", "none", "ask"]),
    );
}

export interface SessionPlan {
  /** The session --session names, when it is already stored. */
  existing: SessionRecord | null;
  /** The id the turn runs in: the stored session's, the one --new creates, or none (a new id). */
  session_id: string | undefined;
  /**
   * The config to hand the first turn: the requested one for a new session; for an existing one
   * only its explicitly requested mode (checked against the locked one), else nothing.
   */
  config: LabSessionConfigInput | undefined;
  /** The config the session runs with: the stored one, or the requested one for a new session. */
  effective: LabSessionConfig | null;
  requested: RequestedConfig;
}

/**
 * Meets the requested config (`requestedSessionConfig`, checked before the database is opened)
 * with the stored session: an existing session keeps its config, its mode is locked (another one is refused here, before a
 * turn starts), and the flags that only shape a new session are reported as ignored.
 */
export async function planSession(
  store: SessionStore,
  flags: SessionFlags,
  requested: RequestedConfig,
  io: CliIo,
): Promise<SessionPlan> {
  if (flags.session === undefined || flags.new) {
    // Only --new creates a session with a given id: a mistyped id must not start a conversation.
    if (flags.session !== undefined && (await store.getSession(flags.session)) !== null) {
      throw new InvalidInputError(
        `session ${terminalSafe(flags.session)} already exists; drop --new to continue it`,
      );
    }
    return {
      existing: null,
      session_id: flags.session,
      config: requested.config,
      effective: requested.config,
      requested,
    };
  }
  const existing = await resolveSession(
    store,
    flags.session,
    "pass --new to create a session with this id; agent-lab sessions lists the others",
  );
  const mode = requested.explicit_mode;
  if (mode !== undefined && mode !== existing.tool_invocation_mode) {
    throw new SessionModeMismatchError(existing.tool_invocation_mode, mode);
  }
  const ignored = [...requested.new_session_flags, ...(flags.title ? ["--title"] : [])];
  if (ignored.length > 0) {
    io.stderr.write(
      `agent-lab: note: session ${existing.id} keeps the config it was created with; ${ignored.join(", ")} ignored\n`,
    );
  }
  const stored = LabSessionConfig.safeParse(existing.config);
  return {
    existing,
    session_id: existing.id,
    config: mode === undefined ? undefined : { tool_invocation_mode: mode },
    effective: stored.success ? stored.data : null,
    requested,
  };
}

/**
 * Both agents' models for a session's config, built once for a caller running many turns (the
 * numbers do not depend on it: the sim's cache is a function of the request); null when the
 * config cannot build them, leaving the refusal to the turn.
 */
export function sessionModels(
  config: LabSessionConfig | null,
  models: ModelProvider,
): { chat: ChatModel; event: ChatModel } | null {
  if (config === null) return null;
  try {
    return {
      chat: models.chatModel(config.chat_agent),
      event: models.chatModel(config.event_agent),
    };
  } catch {
    return null;
  }
}

/**
 * Runs one turn, printing its events as they come (when a printer is given), and returns its
 * report. Refusals before the turn starts throw, as runTurn's do.
 */
export async function runTurnReport(
  options: RunTurnOptions,
  printer: TurnPrinter | null,
  onEvent?: (event: TurnEvent) => void,
): Promise<TurnReport> {
  const builder = new TurnReportBuilder();
  for await (const event of runTurn(options)) {
    builder.add(event);
    onEvent?.(event);
    printer?.print(event);
  }
  const report = builder.report();
  if (report === null) throw new Error("the turn ended without reporting how");
  return report;
}

/**
 * For a new session whose first turn reached nothing (the endpoint refused, did not resolve, never
 * answered): the session holds only that failed turn, so say how to remove it. It is kept rather
 * than deleted unasked: its audit says what was tried.
 */
export function unreachableSessionHint(plan: SessionPlan, report: TurnReport): string | null {
  if (plan.existing !== null || report.turn_index !== 1 || report.status !== "failed") return null;
  if (report.error?.code !== "provider_connection_error") return null;
  return `session ${report.session_id} holds only this failed turn; remove it with: agent-lab delete ${report.session_id} --yes`;
}
