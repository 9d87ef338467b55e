/**
 * The MCP SDK's errors, recognised without importing the SDK: its modules take about 200 ms to
 * load, which every CLI command would pay at start though most never start a server. The SDK is
 * loaded when a server is (mcp-connection.ts). Codes are JSON-RPC's, as the SDK's `ErrorCode`.
 */
export const MCP_CONNECTION_CLOSED = -32000;
export const MCP_REQUEST_TIMEOUT = -32001;

export interface McpErrorLike extends Error {
  code: number;
}

/**
 * The SDK's `McpError` or a subclass: it names itself "McpError" and its message starts
 * "MCP error CODE:", which a subclass renaming itself keeps.
 */
export function isMcpError(error: unknown): error is McpErrorLike {
  return (
    error instanceof Error &&
    typeof (error as { code?: unknown }).code === "number" &&
    (error.name === "McpError" || error.message.startsWith("MCP error "))
  );
}
