import { InvalidInputError } from "../../domain/errors.js";
import type { RequestTool } from "../../domain/gateway.js";
import { ToolRegistry } from "../../tools/registry.js";
import { type Tool, ToolText } from "../../tools/tool.js";

/**
 * The tools of a gateway turn are the client's: the lab never runs them. A call "executes" by
 * waiting for the client's next request, which carries the reply as a `tool` message; the turn
 * then goes on exactly as a native one whose tool answered. Every figure of the tool (latency, the
 * result's size) is the client's own tool as the lab saw it.
 */
export interface ClientCall {
  id: string;
  name: string;
  /** The arguments as the lab validated (and in dual_agent, perhaps repaired) them, as JSON. */
  arguments: string;
}

interface Waiting extends ClientCall {
  resolve(reply: string): void;
  reject(error: Error): void;
}

export class ClientToolBridge {
  readonly registry: ToolRegistry;
  readonly #waiting = new Map<string, Waiting>();
  readonly #onCall: (call: ClientCall) => void;

  /**
   * `validate: false` (pass-through) offers each tool with an open schema: the client gets the
   * model's calls as the model wrote them, so the lab must not answer one itself for a schema it
   * would refuse. `onCall` hears of each call the moment it waits for the client.
   */
  constructor(
    tools: readonly RequestTool[],
    options: { validate: boolean; timeout_ms: number; onCall: (call: ClientCall) => void },
  ) {
    this.#onCall = options.onCall;
    const seen = new Set<string>();
    const offered: Tool[] = tools.map((tool, index) => {
      const { name, description, parameters } = tool.function;
      if (seen.has(name)) {
        throw new InvalidInputError(`tools.${index}.function.name: ${name} is declared twice`);
      }
      seen.add(name);
      return {
        name,
        description: description ?? "",
        parameters: options.validate
          ? (parameters ?? { type: "object", properties: {} })
          : { type: "object" },
        timeout_ms: options.timeout_ms,
        requires_approval: false,
        source: "declared",
        execute: (args, context) => this.#wait(name, args, context.call_id, context.signal),
      };
    });
    // Pass-through: the client got the model's calls as written, a name it does not offer or
    // arguments that are not JSON included, and its reply to each is what the model is sent.
    const otherwise: Tool | undefined = options.validate
      ? undefined
      : {
          name: "client_tool",
          description: "",
          parameters: { type: "object" },
          timeout_ms: options.timeout_ms,
          requires_approval: false,
          source: "declared",
          execute: (args, context) =>
            this.#wait(context.tool_name ?? "client_tool", args, context.call_id, context.signal),
        };
    try {
      this.registry = new ToolRegistry(offered, otherwise === undefined ? {} : { otherwise });
    } catch (error) {
      throw new InvalidInputError(
        `tools: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
  }

  /** The calls waiting for the client's reply, in the order they were made. */
  waiting(): ClientCall[] {
    return [...this.#waiting.values()].map(({ id, name, arguments: args }) => ({
      id,
      name,
      arguments: args,
    }));
  }

  has(id: string): boolean {
    return this.#waiting.has(id);
  }

  /** Hands the client's reply to the call waiting for it; false when no call waits under `id`. */
  answer(id: string, reply: string): boolean {
    const waiting = this.#waiting.get(id);
    if (waiting === undefined) return false;
    this.#waiting.delete(id);
    waiting.resolve(reply);
    return true;
  }

  /**
   * Answers the call waiting under `id` with a failure the lab gives itself, for the model to read
   * (the client never sees the call); false when no call waits under `id`.
   */
  refuse(id: string, reason: string): boolean {
    const waiting = this.#waiting.get(id);
    if (waiting === undefined) return false;
    this.#waiting.delete(id);
    waiting.reject(new Error(reason));
    return true;
  }

  #wait(
    name: string,
    args: Record<string, unknown>,
    id: string | undefined,
    signal: AbortSignal,
  ): Promise<ToolText> {
    if (id === undefined) throw new Error(`tool ${name} was called without a call id`);
    return new Promise<ToolText>((resolve, reject) => {
      const call: Waiting = {
        id,
        name,
        arguments: JSON.stringify(args),
        resolve: (reply) => resolve(new ToolText(reply)),
        reject,
      };
      this.#waiting.set(id, call);
      // Cancelled or timed out: the registry has answered already; only forget the call.
      signal.addEventListener(
        "abort",
        () => {
          this.#waiting.delete(id);
          reject(signal.reason);
        },
        { once: true },
      );
      this.#onCall({ id, name, arguments: call.arguments });
    });
  }
}
