/**
 * A tool the event kernel can run. `parameters` is the JSON Schema of `args`; the kernel validates
 * against it before `execute` is called, so `execute` may trust the shape. A thrown error, a
 * timeout or an abort becomes an error result for the model, never a crash of the turn.
 */
export interface ToolContext {
  /** Aborted when the turn is cancelled or the call times out; long work should stop on it. */
  signal: AbortSignal;
  /** The call's id in the conversation, when a turn runs it (the gateway's client tools need it). */
  call_id?: string;
  /** The name the call was made under: another than the tool's own for a registry's `otherwise`. */
  tool_name?: string;
}

/**
 * A result that is already the text the model should read (a gateway client's tool reply), sent
 * as is instead of as JSON: a string result would otherwise arrive quoted.
 */
export class ToolText {
  constructor(readonly text: string) {}
}

export interface Tool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  /** Longest a call may run before it is abandoned with a timeout error. Default 30,000. */
  timeout_ms?: number;
  /** The turn pauses at a call to this tool until it is approved or denied (issue 10). */
  requires_approval?: boolean;
  /** Where the tool comes from, for listings and the audit log. */
  source?: ToolSourceKind;
  /** Hints a source gives (MCP annotations: readOnlyHint, destructiveHint, …), kept as given. */
  annotations?: Record<string, unknown>;
  execute(args: Record<string, unknown>, context: ToolContext): Promise<unknown>;
}

export type ToolSourceKind = "builtin" | "declared" | "http" | "mcp";
