import { createInterface } from "node:readline/promises";
import {
  type ApprovalPolicy,
  type ApprovalRequest,
  type Approver,
  policyApprover,
} from "../domain/approvals.js";
import type { ApprovalDecision } from "../domain/tool-sources.js";
import { type CliIo, terminalSafe, truncate } from "./output.js";

/** Asks one question and resolves with the line typed; the signal withdraws the question. */
export type Ask = (query: string, signal: AbortSignal) => Promise<string>;

/** `--approve`'s default: ask a person at a terminal, deny when nobody can answer. */
export function approvalPolicyOf(
  flag: ApprovalPolicy | undefined,
  io: Pick<CliIo, "stdin">,
): ApprovalPolicy {
  return flag ?? (io.stdin?.isTTY === true ? "ask" : "none");
}

/**
 * The approver of a CLI turn: `all`/`none` decide by policy; `ask` prompts
 * `approve mock_ticket {…}? [y/N/e(dit)]`, where `e` reads edited arguments as JSON.
 */
export function cliApprover(policy: ApprovalPolicy, ask: () => Ask): Approver {
  if (policy !== "ask") return policyApprover(policy);
  return (request, signal) => promptDecision(request, ask(), signal);
}

async function promptDecision(
  request: ApprovalRequest,
  ask: Ask,
  signal: AbortSignal,
): Promise<ApprovalDecision> {
  const call = `${request.event_name} ${truncate(JSON.stringify(request.arguments), 400)}`;
  for (;;) {
    const answer = (await ask(`approve ${terminalSafe(call)}? [y/N/e(dit)] `, signal))
      .trim()
      .toLowerCase();
    if (answer === "y" || answer === "yes") return { decision: "approve", decided_by: "user" };
    if (answer !== "e" && answer !== "edit") {
      return { decision: "deny", decided_by: "user", reason: "denied at the prompt" };
    }
    const edited = await ask("arguments (JSON): ", signal);
    try {
      const value: unknown = JSON.parse(edited);
      if (typeof value === "object" && value !== null && !Array.isArray(value)) {
        return {
          decision: "approve",
          decided_by: "user",
          arguments: value as Record<string, unknown>,
        };
      }
    } catch {
      // Asked again below.
    }
    await ask("not a JSON object; press Enter to decide again ", signal);
  }
}

/**
 * Questions on the command's own standard input, for `run`; the prompt goes to stderr so that
 * `--json` output stays one document. Lines are queued as they come, so answers typed (or piped)
 * ahead of their question are kept. Closed by `close()` once the turn is over.
 */
export function stdinAsker(io: CliIo): { ask: Ask; close(): void } {
  let readline: ReturnType<typeof createInterface> | null = null;
  let ended = false;
  const lines: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  const open = (input: NodeJS.ReadableStream & { isTTY?: boolean }) => {
    const created = createInterface({
      input,
      output: io.stderr as NodeJS.WritableStream,
      terminal: input.isTTY === true,
    });
    created.on("line", (line) => {
      const next = waiting.shift();
      if (next) next(line);
      else lines.push(line);
    });
    // Ctrl-C at the question cancels the turn, as it does anywhere else in `run`.
    created.on("SIGINT", () => process.emit("SIGINT"));
    // The end of the input answers "no" to whatever is still asked.
    created.on("close", () => {
      ended = true;
      for (const next of waiting.splice(0)) next("");
    });
    return created;
  };
  return {
    ask: (query, signal) => {
      if (io.stdin === undefined) return Promise.resolve("");
      if (readline === null) readline = open(io.stdin);
      io.stderr.write(query);
      const queued = lines.shift();
      if (queued !== undefined) return Promise.resolve(queued);
      if (ended) return Promise.resolve("");
      return new Promise<string>((resolve, reject) => {
        const answer = (line: string) => {
          signal.removeEventListener("abort", onAbort);
          resolve(line);
        };
        const onAbort = () => {
          waiting.splice(waiting.indexOf(answer), 1);
          reject(signal.reason);
        };
        signal.addEventListener("abort", onAbort, { once: true });
        waiting.push(answer);
      });
    },
    close: () => readline?.close(),
  };
}
