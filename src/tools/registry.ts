import { Ajv, type ValidateFunction } from "ajv";
import type { ChatToolDefinition } from "../domain/chat-tool.js";
import { InvalidInputError } from "../domain/errors.js";
import { formatSchemaErrors, ROOT } from "./schema-errors.js";
import type { Tool } from "./tool.js";

/**
 * The event kernel's view of the tools: lookup, JSON Schema validation and guarded execution. A
 * tool's failure of any kind is returned as data (`ok: false` with a `kind`), never thrown, so it
 * can go back to the model as a tool error.
 */

export type ToolRunResult =
  | { ok: true; value: unknown; latency_ms: number }
  | {
      ok: false;
      error: string;
      latency_ms: number;
      kind:
        | "unknown_tool"
        | "invalid_arguments"
        | "failed"
        | "timeout"
        | "interrupted"
        // Refused by an approver (the kernel's, before the tool runs).
        | "denied";
    };

export type ToolFailureKind = Extract<ToolRunResult, { ok: false }>["kind"];

export interface ToolRunOptions {
  /** The caller's signal (the turn's): aborting it ends the call as `interrupted`. */
  signal?: AbortSignal | undefined;
  /** Overrides the tool's timeout for this call; a value that is not a positive number is ignored. */
  timeout_ms?: number | undefined;
  /** Handed to the tool as `context.call_id`. */
  call_id?: string | undefined;
}

export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;

/** The names OpenAI-compatible endpoints accept, which also fit in an `<event name="…">` tag. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** setTimeout fires at once for longer delays, so those (and Infinity) mean "no timeout". */
const MAX_TIMER_MS = 2_147_483_647;

interface Entry {
  tool: Tool;
  validator: ValidateFunction;
}

export interface ToolRegistryOptions {
  /**
   * Runs every call to a name the registry does not have, and the registry's owner takes calls
   * whose arguments are not JSON (`runsEveryCall`): for tools that run elsewhere (a gateway
   * client's), whose owner answers every call the model made, whatever it wrote. Not offered to
   * the model: it is in neither `names` nor `definitions`.
   */
  otherwise?: Tool;
}

export class ToolRegistry {
  readonly #entries = new Map<string, Entry>();
  #otherwise: Entry | undefined;

  /** Compiles every tool's schema; a duplicate name or a bad tool → `InvalidInputError`. */
  constructor(tools: readonly Tool[], options: ToolRegistryOptions = {}) {
    for (const tool of tools) {
      checkTool(tool);
      if (this.#entries.has(tool.name)) {
        throw new InvalidInputError(`duplicate tool name: ${tool.name}`);
      }
      this.#entries.set(tool.name, { tool, validator: compile(tool) });
    }
    const { otherwise } = options;
    if (otherwise !== undefined)
      this.#otherwise = { tool: otherwise, validator: compile(otherwise) };
  }

  /** True when every call is run, any name, any arguments (see ToolRegistryOptions.otherwise). */
  get runsEveryCall(): boolean {
    return this.#otherwise !== undefined;
  }

  has(name: string): boolean {
    return this.#entries.has(name);
  }

  get(name: string): Tool | undefined {
    return this.#entries.get(name)?.tool;
  }

  /** In registration order. */
  names(): string[] {
    return [...this.#entries.keys()];
  }

  /**
   * A registry of just these tools, in the order given (repeats ignored), sharing the compiled
   * validators; an unknown name → `InvalidInputError` naming it and listing the available ones.
   */
  select(names: readonly string[]): ToolRegistry {
    const unknown = [...new Set(names.filter((name) => !this.#entries.has(name)))];
    if (unknown.length > 0) {
      const noun = unknown.length === 1 ? "tool" : "tools";
      throw new InvalidInputError(`unknown ${noun} ${unknown.join(", ")}; ${this.#available()}`);
    }
    const selected = new ToolRegistry([]);
    selected.#otherwise = this.#otherwise;
    for (const name of names) {
      const entry = this.#entries.get(name);
      if (entry !== undefined) selected.#entries.set(name, entry);
    }
    return selected;
  }

  /** For the model port (native tools) and the dual_agent event catalog; copies, safe to edit. */
  definitions(): ChatToolDefinition[] {
    return [...this.#entries.values()].map(({ tool }) => ({
      name: tool.name,
      description: tool.description,
      parameters: structuredClone(tool.parameters),
    }));
  }

  /**
   * Checks `args` against the tool's JSON Schema. The error names each field, e.g.
   * `limit: must be <= 10; query: is required`, short enough to send back to a model.
   */
  validate(name: string, args: unknown): { ok: true } | { ok: false; error: string } {
    const entry = this.#entries.get(name) ?? this.#otherwise;
    if (entry === undefined) return { ok: false, error: this.#unknownTool(name) };
    if (!entry.validator(args)) {
      return { ok: false, error: formatSchemaErrors(entry.validator.errors ?? []) };
    }
    if (!isRecord(args)) return { ok: false, error: `${ROOT}: must be object` };
    return { ok: true };
  }

  /**
   * Validates, then executes with the tool's timeout (default 30,000 ms, or `timeout_ms`) and the
   * caller's signal. Never throws. `latency_ms` is measured around `execute` (0 when it did not
   * run). On a timeout or the caller's abort the tool's own signal is aborted, so it can stop, and
   * the result comes back at once without waiting for the tool.
   */
  async run(name: string, args: unknown, options: ToolRunOptions = {}): Promise<ToolRunResult> {
    const entry = this.#entries.get(name) ?? this.#otherwise;
    if (entry === undefined) {
      return failure("unknown_tool", this.#unknownTool(name), 0);
    }
    const validation = this.validate(name, args);
    if (!validation.ok) return failure("invalid_arguments", validation.error, 0);
    const { signal } = options;
    if (signal?.aborted) return failure("interrupted", "interrupted", 0);
    const timeoutMs = timeoutOf(options.timeout_ms, entry.tool.timeout_ms);
    const call = { call_id: options.call_id, tool_name: name };
    return execute(entry.tool, args as Record<string, unknown>, timeoutMs, signal, call);
  }

  #available(): string {
    const names = this.names();
    return `available: ${names.length > 0 ? names.join(", ") : "(none)"}`;
  }

  #unknownTool(name: string): string {
    return `unknown tool ${name}; ${this.#available()}`;
  }
}

function execute(
  tool: Tool,
  args: Record<string, unknown>,
  timeoutMs: number | null,
  signal: AbortSignal | undefined,
  call: { call_id: string | undefined; tool_name: string },
): Promise<ToolRunResult> {
  const controller = new AbortController();
  const startedAt = performance.now();
  const elapsed = () => Math.round((performance.now() - startedAt) * 100) / 100;

  return new Promise<ToolRunResult>((resolve) => {
    let settled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const onAbort = () => {
      settle(failure("interrupted", "interrupted", elapsed()), signal?.reason);
    };
    /** Settles once; an abort reason also aborts the tool's signal (after the result is fixed). */
    function settle(result: ToolRunResult, abortReason?: unknown): void {
      if (settled) return;
      settled = true;
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      if (!result.ok && (result.kind === "timeout" || result.kind === "interrupted")) {
        controller.abort(abortReason);
      }
      resolve(result);
    }

    if (timeoutMs !== null) {
      timer = setTimeout(() => {
        const message = `timed out after ${timeoutMs} ms`;
        settle(failure("timeout", message, elapsed()), new ToolTimeoutError(message));
      }, timeoutMs);
    }
    signal?.addEventListener("abort", onAbort, { once: true });

    let pending: Promise<unknown>;
    try {
      pending = Promise.resolve(
        tool.execute(args, {
          signal: controller.signal,
          tool_name: call.tool_name,
          ...(call.call_id === undefined ? {} : { call_id: call.call_id }),
        }),
      );
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending.then(
      (value) => settle({ ok: true, value, latency_ms: elapsed() }),
      (error: unknown) => settle(failure("failed", errorMessage(error), elapsed())),
    );
  });
}

/** The reason a timed-out tool's signal is aborted with. */
export class ToolTimeoutError extends Error {
  override readonly name = "TimeoutError";
}

function failure(kind: ToolFailureKind, error: string, latency_ms: number): ToolRunResult {
  return { ok: false, error, latency_ms, kind };
}

function timeoutOf(override: number | undefined, own: number | undefined): number | null {
  const chosen = isPositive(override) ? override : isPositive(own) ? own : DEFAULT_TOOL_TIMEOUT_MS;
  return chosen > MAX_TIMER_MS ? null : chosen;
}

const isPositive = (value: number | undefined): value is number =>
  typeof value === "number" && value > 0;

function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === "string" && error) return error;
  if (isRecord(error) && typeof error.message === "string" && error.message) return error.message;
  return `tool failed: ${String(error)}`;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function checkTool(tool: Tool): void {
  if (!isRecord(tool) || typeof tool.name !== "string" || !TOOL_NAME.test(tool.name)) {
    const name = isRecord(tool) ? JSON.stringify(tool.name) : String(tool);
    throw new InvalidInputError(`invalid tool name ${name}: use 1-64 letters, digits, "_" or "-"`);
  }
  if (typeof tool.description !== "string") {
    throw new InvalidInputError(`tool ${tool.name}: description must be a string`);
  }
  if (!isRecord(tool.parameters)) {
    throw new InvalidInputError(`tool ${tool.name}: parameters must be a JSON Schema object`);
  }
  if (typeof tool.execute !== "function") {
    throw new InvalidInputError(`tool ${tool.name}: execute must be a function`);
  }
  if (tool.timeout_ms !== undefined && !isPositive(tool.timeout_ms)) {
    throw new InvalidInputError(`tool ${tool.name}: timeout_ms must be a positive number`);
  }
}

const ajv = new Ajv({ allErrors: true, strict: false, logger: false, verbose: true });
/**
 * Compiled validators by schema text. Compiling costs far more than a whole turn of the lab, and
 * registries are built per turn, so each distinct schema is compiled once per process.
 */
const compiled = new Map<string, ValidateFunction>();

function compile(tool: Tool): ValidateFunction {
  // Draft-07 ajv reads the schema; a `$schema` naming another draft (zod emits 2020-12) would
  // make it refuse, though the keywords tools use are the same.
  const { $schema: _ignored, ...schema } = tool.parameters;
  const key = JSON.stringify(schema);
  const known = compiled.get(key);
  if (known) return known;
  try {
    const validator = ajv.compile(schema);
    compiled.set(key, validator);
    return validator;
  } catch (error) {
    throw new InvalidInputError(
      `tool ${tool.name}: invalid parameters schema: ${errorMessage(error)}`,
      { cause: error },
    );
  }
}
