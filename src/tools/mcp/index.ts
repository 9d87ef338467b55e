import type { Environment } from "../../domain/env-references.js";
import { InvalidInputError } from "../../domain/errors.js";
import { findCredentialProblems } from "../../domain/secrets.js";
import { McpServerDefinition, McpServerName } from "../../domain/tool-sources.js";
import { parseInput } from "../../domain/validation.js";
import { checkServerPrefix } from "./mcp-tool-names.js";
import { McpToolSource } from "./mcp-tool-source.js";

export { McpToolSource } from "./mcp-tool-source.js";

export interface McpToolSourceOptions {
  /** Where `${NAME}` references in `env` and `headers` are read; default `process.env`. */
  env?: Environment;
}

/**
 * An MCP server from the lab config file as a tool source. Nothing starts here: the server is
 * started by the first `tools()`. A definition that would store a secret (a literal header, a
 * secret-named env value) or a name that cannot prefix tool names is refused now, naming it.
 */
export function createMcpToolSource(
  name: string,
  definition: McpServerDefinition,
  options: McpToolSourceOptions = {},
): McpToolSource {
  parseInput(McpServerName, name, "MCP server name");
  const parsed = parseInput(McpServerDefinition, definition, `MCP server ${name}`);
  const problems = findCredentialProblems(parsed);
  if (problems.length > 0) {
    throw new InvalidInputError(
      `MCP server ${name}: ${problems.map(({ path, message }) => `${path.join(".")}: ${message}`).join("; ")}`,
    );
  }
  checkServerPrefix(name);
  return new McpToolSource(name, parsed, options.env ?? process.env);
}
