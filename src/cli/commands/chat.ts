import { createInterface, type Interface } from "node:readline/promises";
import type { Command } from "commander";
import type { ApprovalPolicy, Approver } from "../../domain/approvals.js";
import { InvalidInputError } from "../../domain/errors.js";
import type { LabSessionConfigInput } from "../../domain/session-config.js";
import type { ChatModel } from "../../providers/chat-model.js";
import type { TurnProviders } from "../../runtime/turn-providers.js";
import type { SessionStore } from "../../store/session-store.js";
import { approvalPolicyOf, cliApprover } from "../approval-prompt.js";
import type { CommandContext } from "../command-context.js";
import { type DatabaseLocation, openStoreForWriting } from "../database-path.js";
import { agentModels, type CliIo, plural, terminalSafe, writeError } from "../output.js";
import { requestedSessionConfig } from "../session-config-options.js";
import { TurnPrinter } from "../turn-printer.js";
import {
  addSessionOptions,
  planSession,
  runTurnReport,
  type SessionFlags,
  type SessionPlan,
  sessionModels,
} from "../turn-session.js";
import { printUsage, turnStatuses } from "./usage.js";

const PROMPT = "you> ";
/** A second Ctrl-C this soon after the first always quits. */
const DOUBLE_INTERRUPT_MS = 1000;
const EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;

const HELP = `Commands:
  /usage    the session's tokens, calls and times, per turn and in total
  /session  the session's id, title, mode and models
  /help     this list
  /exit     leave (so does Ctrl-D)
Any other line is a message to the agent; start it with // to send a line that begins with /.
Ctrl-C cancels a running turn (what it produced is kept, marked cancelled); at an empty prompt,
or twice within a second, it leaves.
`;

export function registerChatCommand(program: Command, context: CommandContext): void {
  const command = program
    .command("chat")
    .description(
      "Talk with an agent: each line you type runs a turn in one session, streamed like run.",
    );
  addSessionOptions(command, "the start of your first message")
    .addHelpText(
      "after",
      `
The session is created by the first message, with the config of --config and the flags; an
existing one (--session ID, or a unique prefix of the id) keeps its config; --session ID --new
creates one with that id. --approve ask (the default at a terminal) asks
before a call to a tool that requires approval (mock_ticket) runs; piped input defaults to none.
In the loop: /usage, /session, /help, /exit (or
Ctrl-D). Ctrl-C cancels the running turn and the chat goes on; at an empty prompt, or twice within
a second, it leaves (exit code 130). Lines can be piped in: echo "hello" | agent-lab chat --approve all

Examples:
  $ agent-lab chat
  $ agent-lab chat --mode chat_agent_tools --title "ticket triage"
  $ agent-lab chat --session 3f1c
  $ agent-lab chat --session triage --new --mode chat_agent_tools
  $ OPENAI_API_KEY=… agent-lab chat --model openai:gpt-4.1-mini`,
    )
    .action(async (flags: SessionFlags, command: Command) => {
      context.exitCode = await chatCommand(flags, command, context);
    });
}

async function chatCommand(
  flags: SessionFlags,
  command: Command,
  context: CommandContext,
): Promise<number> {
  const providers = context.providers(command);
  try {
    return await chatWithProviders(flags, command, context, providers);
  } finally {
    await providers.tools.close();
  }
}

async function chatWithProviders(
  flags: SessionFlags,
  command: Command,
  context: CommandContext,
  providers: TurnProviders,
): Promise<number> {
  const { io } = context;
  if (io.stdin === undefined) throw new InvalidInputError("chat needs a standard input to read");
  const requested = await requestedSessionConfig(flags, providers);
  const policy = approvalPolicyOf(flags.approve, io);
  // Piped lines are messages: an answer to the prompt could not be told apart from the next one.
  if (policy === "ask" && !(io.stdin.isTTY === true && io.stdout.isTTY === true)) {
    throw new InvalidInputError(
      "--approve ask needs a terminal (stdin and stdout); with piped input use --approve all or --approve none",
    );
  }
  const location = context.database(command);
  const store = await openStoreForWriting(location, io.stderr);
  try {
    const plan = await planSession(store, flags, requested, io);
    const repl = new ChatRepl({
      io,
      input: io.stdin,
      store,
      location,
      flags,
      plan,
      providers,
      policy,
    });
    return await repl.run();
  } finally {
    await store.close();
  }
}

interface ChatReplOptions {
  io: CliIo;
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  store: SessionStore;
  location: DatabaseLocation;
  flags: SessionFlags;
  plan: SessionPlan;
  providers: TurnProviders;
  /** `--approve`, or its default, already checked against the terminal. */
  policy: ApprovalPolicy;
}

/** The read–run–print loop: one turn per line, slash commands, and Ctrl-C per turn. */
class ChatRepl {
  readonly #io: CliIo;
  readonly #store: SessionStore;
  readonly #location: DatabaseLocation;
  readonly #flags: SessionFlags;
  readonly #plan: SessionPlan;
  readonly #providers: TurnProviders;
  /** Built once and kept across turns: no model is set up again for each line typed. */
  readonly #models: { chat: ChatModel; event: ChatModel } | null;
  readonly #readline: Interface;
  /** Readline owns the terminal (line editing, history, Ctrl-C as a key); else lines are piped. */
  readonly #terminal: boolean;
  /** Known once the session is stored: from --session, or from the first turn. */
  #sessionId: string | undefined;
  /** The running turn's cancel switch. */
  #turn: AbortController | null = null;
  #lastInterrupt = Number.NEGATIVE_INFINITY;
  /** Set when the chat is to end with this code (Ctrl-C at the prompt, SIGTERM). */
  #exitCode: number | null = null;
  /** Asks at the chat's own prompt (`--approve ask`), or decides by policy. */
  readonly #approve: Approver;

  constructor(options: ChatReplOptions) {
    this.#io = options.io;
    this.#store = options.store;
    this.#location = options.location;
    this.#flags = options.flags;
    this.#plan = options.plan;
    this.#providers = options.providers;
    this.#models = sessionModels(options.plan.effective, options.providers.models);
    this.#sessionId = options.plan.existing?.id;
    const output = options.io.stdout as Partial<NodeJS.WriteStream>;
    this.#terminal = options.input.isTTY === true && output.isTTY === true;
    this.#readline = this.#terminal
      ? createInterface({
          input: options.input,
          output: output as NodeJS.WriteStream,
          terminal: true,
          prompt: PROMPT,
        })
      : createInterface({ input: options.input, terminal: false });
    // The question takes the next typed line; the loop reading messages waits for the turn.
    this.#approve = cliApprover(
      options.policy,
      () => (query, signal) => this.#readline.question(query, { signal }),
    );
  }

  async run(): Promise<number> {
    const onInterrupt = () => this.#interrupt();
    const onTerminate = () => this.#terminate();
    process.on("SIGINT", onInterrupt);
    process.on("SIGTERM", onTerminate);
    // In a terminal readline reads Ctrl-C as a key and reports it here instead of the signal.
    this.#readline.on("SIGINT", onInterrupt);
    try {
      await this.#banner();
      this.#prompt();
      let endOfInput = true;
      for await (const line of this.#readline) {
        if (this.#exitCode !== null) break;
        // Without readline's terminal nothing shows the line after its prompt: the transcript
        // (piped in, or written to a file) reads like the conversation.
        if (!this.#terminal) this.#io.stdout.write(`${line}\n`);
        const goOn = await this.#handle(line);
        if (!goOn || this.#exitCode !== null) {
          endOfInput = false;
          break;
        }
        this.#prompt();
      }
      // End of input (Ctrl-D, or the end of what was piped) leaves the prompt's line open.
      if (endOfInput && this.#exitCode === null) this.#io.stdout.write("\n");
      return this.#exitCode ?? 0;
    } finally {
      process.off("SIGINT", onInterrupt);
      process.off("SIGTERM", onTerminate);
      this.#readline.close();
    }
  }

  async #banner(): Promise<void> {
    const simulated =
      this.#models && (this.#models.chat.simulated || this.#models.event.simulated)
        ? " (simulated model)"
        : "";
    const existing = this.#plan.existing;
    const session = existing
      ? `Session ${existing.id}: ${existing.title} · ${plural((await this.#store.listTurns(existing.id)).length, "turn")} so far`
      : this.#plan.session_id !== undefined
        ? `Session ${this.#plan.session_id} is new: it is created by your first message.`
        : "A new session: it is created by your first message.";
    this.#io.stdout.write(
      `agent-lab chat · database ${this.#location.label}${simulated}\n${terminalSafe(session)}\nType a message; /help lists the commands, /exit or Ctrl-D leaves.\n`,
    );
  }

  #prompt(): void {
    if (this.#terminal) this.#readline.prompt();
    else this.#io.stdout.write(PROMPT);
  }

  /** Runs one line; false ends the chat. */
  async #handle(line: string): Promise<boolean> {
    const text = line.trim();
    if (text === "") return true;
    if (text.startsWith("/") && !text.startsWith("//")) return this.#command(text);
    await this.#runTurn(text.startsWith("//") ? text.slice(1) : text);
    return true;
  }

  async #command(text: string): Promise<boolean> {
    const [name] = text.split(/\s+/, 1);
    switch (name) {
      case "/exit":
      case "/quit":
        return false;
      case "/help":
        this.#io.stdout.write(HELP);
        return true;
      case "/usage":
        await this.#usage();
        return true;
      case "/session":
        await this.#session();
        return true;
      default:
        writeError(this.#io, `unknown command ${name}; /help lists the commands`);
        return true;
    }
  }

  async #usage(): Promise<void> {
    if (this.#sessionId === undefined) {
      this.#io.stdout.write("No usage yet: the session starts with your first message.\n");
      return;
    }
    printUsage(
      this.#io,
      this.#sessionId,
      await this.#store.usageSummary(this.#sessionId),
      await this.#store.getSession(this.#sessionId),
      turnStatuses(await this.#store.listTurns(this.#sessionId)),
    );
  }

  async #session(): Promise<void> {
    const stored =
      this.#sessionId === undefined ? null : await this.#store.getSession(this.#sessionId);
    const config = this.#plan.effective;
    const mode = stored?.tool_invocation_mode ?? config?.tool_invocation_mode ?? "";
    const models = config ? agentModels(mode, config) : "config not readable as a lab config";
    const simulated =
      this.#models && (this.#models.chat.simulated || this.#models.event.simulated)
        ? " (simulated model)"
        : "";
    const head = stored
      ? `Session ${stored.id}: ${stored.title} · ${plural((await this.#store.listTurns(stored.id)).length, "turn")}`
      : "No session yet: it is created by your first message.";
    this.#io.stdout.write(
      `${terminalSafe(`${head}\nmode ${mode} · ${models}`)}${simulated}\ndatabase ${this.#location.label}\n`,
    );
  }

  async #runTurn(message: string): Promise<void> {
    const controller = new AbortController();
    this.#turn = controller;
    const printer = new TurnPrinter(this.#io);
    const isNew = this.#sessionId === undefined && this.#plan.existing === null;
    const sessionId = this.#sessionId ?? this.#plan.session_id;
    // Only the turn that creates the session hands it a config and a title.
    const config: LabSessionConfigInput | undefined =
      this.#sessionId === undefined ? this.#plan.config : undefined;
    try {
      const report = await runTurnReport(
        {
          store: this.#store,
          message,
          ...(sessionId !== undefined ? { session_id: sessionId } : {}),
          ...(this.#flags.title !== undefined && isNew ? { title: this.#flags.title } : {}),
          ...(config !== undefined ? { config } : {}),
          ...(this.#models ? { models: this.#models } : {}),
          signal: controller.signal,
          providers: this.#providers,
          approve: this.#approve,
        },
        printer,
        (event) => {
          if (event.type !== "turn_start" || this.#sessionId !== undefined) return;
          this.#sessionId = event.session_id;
          if (isNew) this.#io.stdout.write(`(session ${terminalSafe(event.session_id)} created)\n`);
        },
      );
      printer.footer(report, { brief: true });
      if (report.status === "failed") {
        writeError(this.#io, report.error?.message ?? `turn ${report.turn_index} failed`);
      } else if (report.status === "cancelled") {
        writeError(
          this.#io,
          `turn ${report.turn_index} was cancelled; what it produced is stored (Ctrl-C at the empty prompt leaves)`,
        );
      }
    } catch (error) {
      // A refused turn (another one running, say) leaves the chat open for the next line.
      writeError(this.#io, error instanceof Error ? error.message : String(error));
    } finally {
      this.#turn = null;
    }
  }

  /** Ctrl-C: cancels the running turn; at the prompt, leaves (or clears what was typed). */
  #interrupt(): void {
    const now = Date.now();
    const repeated = now - this.#lastInterrupt < DOUBLE_INTERRUPT_MS;
    this.#lastInterrupt = now;
    const turn = this.#turn;
    if (turn !== null) {
      // A second Ctrl-C does not wait for the cancelled turn to wind down.
      if (turn.signal.aborted) this.#exitNow(EXIT_CODES.SIGINT);
      turn.abort(new Error("cancelled by SIGINT"));
      return;
    }
    if (!this.#terminal || this.#readline.line === "" || repeated) {
      this.#quit(EXIT_CODES.SIGINT);
      return;
    }
    // Something typed: drop it, as a shell does, and say how to leave.
    this.#readline.write(null, { ctrl: true, name: "e" });
    this.#readline.write(null, { ctrl: true, name: "u" });
    this.#io.stdout.write("\n(Ctrl-C again, /exit or Ctrl-D leaves)\n");
    this.#prompt();
  }

  /** SIGTERM: the running turn is cancelled and stored, then the chat ends. */
  #terminate(): void {
    const turn = this.#turn;
    if (turn?.signal.aborted) this.#exitNow(EXIT_CODES.SIGTERM);
    if (turn) {
      this.#exitCode = EXIT_CODES.SIGTERM;
      turn.abort(new Error("cancelled by SIGTERM"));
      return;
    }
    this.#quit(EXIT_CODES.SIGTERM);
  }

  /** Leaves at once, as `run` does on a second signal: the turn is left to crash recovery. */
  #exitNow(code: number): never {
    this.#io.stdout.write("\n");
    process.exit(code);
  }

  #quit(code: number): void {
    if (this.#exitCode !== null) return;
    this.#exitCode = code;
    this.#io.stdout.write("\n");
    this.#readline.close();
  }
}
