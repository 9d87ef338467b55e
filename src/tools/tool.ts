/**
 * A tool the event kernel can run. `parameters` is the JSON Schema of `args`; the kernel validates
 * against it before `execute` is called, so `execute` may trust the shape. A thrown error, a
 * timeout or an abort becomes an error result for the model, never a crash of the turn.
 */
export interface ToolContext {
  /** Aborted when the turn is cancelled or the call times out; long work should stop on it. */
  signal: AbortSignal;
}

export interface Tool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  /** Longest a call may run before it is abandoned with a timeout error. Default 30,000. */
  timeout_ms?: number;
  execute(args: Record<string, unknown>, context: ToolContext): Promise<unknown>;
}
