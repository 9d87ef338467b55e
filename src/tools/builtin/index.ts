import type { Tool } from "../tool.js";
import { createMockSearchTool } from "./mock-search.js";
import { createMockTicketTool } from "./mock-ticket.js";

export * from "./mock-search.js";
export * from "./mock-ticket.js";

export interface BuiltinToolOptions {
  /** Artificial latency of every call in milliseconds (default 0); an abort cuts it short. */
  latency_ms?: number;
}

/**
 * The built-in tools, deterministic and storing nothing: `[mock_search, mock_ticket]`. Filing a
 * ticket stands for a side effect, so `mock_ticket` requires approval.
 */
export function createBuiltinTools(options: BuiltinToolOptions = {}): Tool[] {
  const toolOptions = options.latency_ms === undefined ? {} : { latency_ms: options.latency_ms };
  return [createMockSearchTool(toolOptions), createMockTicketTool(toolOptions)];
}
