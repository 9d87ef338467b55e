import type { Tool } from "./tool.js";

/**
 * A provider of tools outside the process's own code: an MCP server, the HTTP tools of the lab
 * config file. Sources that start something (a child process, a connection) do it lazily, on the
 * first `tools()` call, keep it for the turns of this process, and stop it on `close()`.
 */
export interface ToolSource {
  /** `mcp:NAME`, `http`, …: for listings and error messages. */
  readonly name: string;
  /** The tools offered now. A source that cannot start rejects with an error naming itself. */
  tools(signal?: AbortSignal): Promise<Tool[]>;
  /** Stops what the source started; idempotent. */
  close(): Promise<void>;
}
