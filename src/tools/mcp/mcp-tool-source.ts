import { z } from "zod";
import type { Environment } from "../../domain/env-references.js";
import { ToolSourceError } from "../../domain/errors.js";
import { redactSecretText } from "../../domain/secrets.js";
import type { McpServerDefinition } from "../../domain/tool-sources.js";
import { redactResult } from "../redact-result.js";
import type { Tool } from "../tool.js";
import type { ToolSource } from "../tool-source.js";
import { connectMcpServer, type McpConnection, messageOf } from "./mcp-connection.js";
import { isMcpError, MCP_CONNECTION_CLOSED, MCP_REQUEST_TIMEOUT } from "./mcp-errors.js";
import { McpToolCallError, mapCallToolResult } from "./mcp-result.js";
import { normalizeInputSchema } from "./mcp-schema.js";
import { exposeToolNames } from "./mcp-tool-names.js";

/**
 * The SDK's own `listTools` rejects the whole list when one tool's schema lacks `type: "object"`;
 * this reads each tool loosely so a bad one can be repaired or refused alone.
 */
const ListedTool = z.looseObject({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: z.unknown().optional(),
  annotations: z.record(z.string(), z.unknown()).optional(),
});
type ListedTool = z.output<typeof ListedTool>;
const ToolList = z.looseObject({
  tools: z.array(ListedTool),
  nextCursor: z.string().optional(),
});
/** A server that pages forever is cut off here. */
const MAX_LIST_PAGES = 50;

/**
 * One MCP server as a tool source. The server starts on the first `tools()` (or call), is reused
 * for every turn of the process, and is stopped by `close()`. A call the server does not survive
 * fails alone, as an error result; the next call starts (stdio) or reconnects (HTTP) it again.
 */
export class McpToolSource implements ToolSource {
  readonly name: string;
  readonly #server: string;
  readonly #definition: McpServerDefinition;
  readonly #env: Environment;
  #connection: McpConnection | null = null;
  #connecting: Promise<McpConnection> | null = null;
  #listed: { connection: McpConnection; tools: Tool[] } | null = null;
  #notes: string[] = [];
  #closed = false;

  constructor(server: string, definition: McpServerDefinition, env: Environment) {
    this.name = `mcp:${server}`;
    this.#server = server;
    this.#definition = definition;
    this.#env = env;
  }

  /** The running child's process id (stdio), or null when none runs: for diagnostics and tests. */
  get pid(): number | null {
    return this.#connection?.alive ? this.#connection.pid : null;
  }

  /** What was changed or refused in the server's tool list (renamed tools, repaired schemas). */
  notes(): readonly string[] {
    return this.#notes;
  }

  async tools(signal?: AbortSignal): Promise<Tool[]> {
    const connection = await this.#connect(signal);
    if (this.#listed?.connection !== connection) {
      this.#listed = { connection, tools: await this.#listTools(connection, signal) };
    }
    return [...this.#listed.tools];
  }

  async close(): Promise<void> {
    this.#closed = true;
    const pending = this.#connecting;
    if (pending !== null) await pending.catch(() => {});
    const connection = this.#connection;
    this.#connection = null;
    this.#listed = null;
    await connection?.close().catch(() => {});
  }

  async #listTools(connection: McpConnection, signal?: AbortSignal): Promise<Tool[]> {
    const listed: ListedTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const result = await connection.client
        .request(
          { method: "tools/list", params: cursor === undefined ? {} : { cursor } },
          ToolList,
          { timeout: this.#definition.start_timeout_ms, ...(signal ? { signal } : {}) },
        )
        .catch((error: unknown) => {
          throw new ToolSourceError(
            this.#server,
            `MCP server ${this.#server}: listing tools failed: ${messageOf(error)}`,
            { cause: error },
          );
        });
      listed.push(...result.tools);
      cursor = result.nextCursor;
      if (cursor === undefined) break;
    }
    const notes: string[] = [];
    const names = exposeToolNames(
      this.#server,
      listed.map((tool) => tool.name),
    );
    const tools: Tool[] = [];
    listed.forEach((listedTool, index) => {
      const naming = names[index] as (typeof names)[number];
      if (naming.note !== null) notes.push(naming.note);
      const schema = normalizeInputSchema(listedTool.inputSchema);
      if (!schema.ok) {
        notes.push(`tool ${JSON.stringify(listedTool.name)} is not offered: ${schema.reason}`);
        return;
      }
      for (const change of schema.changes) {
        notes.push(`tool ${JSON.stringify(listedTool.name)}: ${change}`);
      }
      tools.push(this.#tool(listedTool, naming.exposed, schema.schema));
    });
    this.#notes = notes.map((note) => `MCP server ${this.#server}: ${note}`);
    return tools;
  }

  #tool(listed: ListedTool, exposed: string, parameters: Record<string, unknown>): Tool {
    const annotations = listed.annotations;
    // MCP's own defaults: a tool is assumed destructive and not read-only unless it says so.
    const risky = annotations?.destructiveHint === true || annotations?.readOnlyHint !== true;
    return {
      name: exposed,
      description: listed.description ?? listed.title ?? "",
      parameters,
      timeout_ms: this.#definition.timeout_ms,
      requires_approval: this.#definition.requires_approval ?? risky,
      source: "mcp",
      ...(annotations === undefined ? {} : { annotations: { ...annotations } }),
      execute: (args, { signal }) => this.#call(listed.name, args, signal),
    };
  }

  async #call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<unknown> {
    const connection = await this.#connect(signal);
    let result: Parameters<typeof mapCallToolResult>[0];
    try {
      result = await connection.client.callTool({ name: tool, arguments: args }, undefined, {
        signal,
        timeout: this.#definition.timeout_ms,
      });
    } catch (error) {
      throw this.#callFailure(tool, connection, error, signal);
    }
    try {
      return redactResult(mapCallToolResult(result));
    } catch (error) {
      throw error instanceof McpToolCallError
        ? new McpToolCallError(redactSecretText(error.message))
        : error;
    }
  }

  #callFailure(
    tool: string,
    connection: McpConnection,
    error: unknown,
    signal: AbortSignal,
  ): Error {
    const where = `MCP server ${this.#server}, tool ${tool}`;
    // Cancelled or timed out by the caller: the SDK told the server; the connection stays.
    if (signal.aborted) return new Error(`${where}: ${messageOf(signal.reason)}`, { cause: error });
    if (isMcpError(error) && error.code === MCP_REQUEST_TIMEOUT) {
      return new Error(`${where}: no answer within ${this.#definition.timeout_ms} ms`);
    }
    const closed = !connection.alive || (isMcpError(error) && error.code === MCP_CONNECTION_CLOSED);
    if (closed || !isMcpError(error)) {
      // The transport is gone or broken (child exited, HTTP server unreachable): drop it, so the
      // next call starts afresh instead of writing into a dead pipe.
      this.#drop(connection);
      const what = closed ? "the server closed the connection during the call" : messageOf(error);
      return new Error(
        `${where}: ${what}${connection.describeExit()}; the next call starts it again`,
        { cause: error },
      );
    }
    // The server answered with a JSON-RPC error: it is alive, only this call failed.
    return new Error(`${where}: ${error.message}`, { cause: error });
  }

  #drop(connection: McpConnection): void {
    if (this.#connection === connection) this.#connection = null;
    void connection.close().catch(() => {});
  }

  /** The live connection, started once however many callers ask at the same time. */
  async #connect(signal?: AbortSignal): Promise<McpConnection> {
    if (this.#closed) throw new Error(`MCP server ${this.#server}: the tool source is closed`);
    const current = this.#connection;
    if (current?.alive) return current;
    if (current !== null) this.#drop(current);
    if (this.#connecting === null) {
      // Not tied to the first caller's signal: one cancelled turn must not fail another's start.
      this.#connecting = connectMcpServer(this.#server, this.#definition, this.#env)
        .then(async (connection) => {
          if (this.#closed) {
            await connection.close().catch(() => {});
            throw new Error(`MCP server ${this.#server}: the tool source is closed`);
          }
          this.#connection = connection;
          return connection;
        })
        .finally(() => {
          this.#connecting = null;
        });
    }
    return untilAborted(this.#connecting, signal);
  }
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
