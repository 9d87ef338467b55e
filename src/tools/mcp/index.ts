import type { McpServerDefinition } from "../../domain/tool-sources.js";
import type { ToolSource } from "../tool-source.js";

// PLACEHOLDER until the MCP source lands (issue 10): the signature the lab config loader calls.
export function createMcpToolSource(name: string, _definition: McpServerDefinition): ToolSource {
  throw new Error(`MCP server ${name}: MCP sources are not built yet`);
}
