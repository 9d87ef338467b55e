import type { HttpToolDefinition } from "../../domain/tool-sources.js";
import type { ToolSource } from "../tool-source.js";

// PLACEHOLDER until HTTP tools land (issue 10): the signature the lab config loader calls.
export function createHttpToolSource(_definitions: readonly HttpToolDefinition[]): ToolSource {
  throw new Error("HTTP tools are not built yet");
}
