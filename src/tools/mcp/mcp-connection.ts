import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type Environment, resolveHeaders } from "../../domain/env-references.js";
import { ToolSourceError } from "../../domain/errors.js";
import { redactSecretText } from "../../domain/secrets.js";
import type { McpServerDefinition } from "../../domain/tool-sources.js";
import { isMcpError, MCP_REQUEST_TIMEOUT } from "./mcp-errors.js";

/**
 * One live session with an MCP server: the SDK client over stdio (a child process) or Streamable
 * HTTP. `alive` turns false when the transport closes (the child exited, the client closed), so
 * the source knows to start a new one rather than send into a dead pipe.
 */
export interface McpConnection {
  readonly client: Client;
  readonly alive: boolean;
  /** The child's process id (stdio), or null. */
  readonly pid: number | null;
  /** Why the transport closed, for the error of a call it cut short. */
  describeExit(): string;
  close(): Promise<void>;
}

/** The last stderr a child wrote, kept for error messages; the pipe must be drained anyway. */
const STDERR_TAIL_CHARS = 2_000;
const CLIENT_INFO = { name: "agent-lab", version: "0.1.0" };

/** The SDK's client side, loaded with the first server (see mcp-errors.ts for why not before). */
async function loadSdk() {
  const [{ Client }, { StdioClientTransport }, { StreamableHTTPClientTransport }] =
    await Promise.all([
      import("@modelcontextprotocol/sdk/client/index.js"),
      import("@modelcontextprotocol/sdk/client/stdio.js"),
      import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    ]);
  return { Client, StdioClientTransport, StreamableHTTPClientTransport };
}

export async function connectMcpServer(
  server: string,
  definition: McpServerDefinition,
  env: Environment,
): Promise<McpConnection> {
  const sdk = await loadSdk();
  let stderrTail = "";
  let alive = true;
  let transport: Transport;
  let stdio: StdioClientTransport | null = null;
  let http: StreamableHTTPClientTransport | null = null;
  if (definition.command !== undefined) {
    stdio = new sdk.StdioClientTransport({
      command: definition.command,
      args: definition.args,
      // Values are resolved now, at start: the config keeps `${NAME}`, never the secret.
      env: resolveHeaders(definition.env, env, `MCP server ${server}: env`),
      ...(definition.cwd === undefined ? {} : { cwd: definition.cwd }),
      // Piped, not inherited: a server's logging must not land in the CLI's output.
      stderr: "pipe",
    });
    stdio.stderr?.on("data", (chunk: Buffer) => {
      stderrTail = (stderrTail + chunk.toString("utf8")).slice(-STDERR_TAIL_CHARS);
    });
    transport = stdio;
  } else {
    const headers = resolveHeaders(definition.headers, env, `MCP server ${server}: headers`);
    http = new sdk.StreamableHTTPClientTransport(new URL(definition.url as string), {
      requestInit: { headers },
    });
    transport = http;
  }
  const client = new sdk.Client(CLIENT_INFO);
  client.onclose = () => {
    alive = false;
  };
  // Errors also reach the pending request that suffered them; this only keeps them off stderr.
  client.onerror = () => {};
  const connecting = client.connect(transport, { timeout: definition.start_timeout_ms });
  // The child is spawned synchronously by connect; its pid is known before the handshake ends.
  const pid = stdio?.pid ?? null;
  try {
    await connecting;
  } catch (error) {
    await client.close().catch(() => {});
    // The SDK closes on a failed handshake without waiting for the child to go, and a server
    // that never answered is not owed a graceful exit: it must not outlive the failed start.
    if (pid !== null) killQuietly(pid);
    throw new ToolSourceError(
      server,
      `MCP server ${server} did not start: ${startFailure(error, definition)}${stderrNote(stderrTail)}`,
      { cause: error },
    );
  }
  return {
    client,
    get alive() {
      return alive;
    },
    pid,
    describeExit: () => stderrNote(stderrTail),
    close: async () => {
      alive = false;
      // Tells an HTTP server to drop the session now rather than when it times it out.
      await http?.terminateSession().catch(() => {});
      // StdioClientTransport.close ends stdin, then SIGTERM, then SIGKILL: no orphan child.
      await client.close();
    },
  };
}

function startFailure(error: unknown, definition: McpServerDefinition): string {
  return isMcpError(error) && error.code === MCP_REQUEST_TIMEOUT
    ? `no answer to the handshake within ${definition.start_timeout_ms} ms (start_timeout_ms)`
    : messageOf(error);
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

function stderrNote(tail: string): string {
  const lines = tail.trim().split("\n").slice(-3).join(" | ");
  return lines ? `; stderr: ${redactSecretText(lines).slice(-500)}` : "";
}

export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}
