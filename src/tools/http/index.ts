import type { Environment } from "../../domain/env-references.js";
import { InvalidInputError } from "../../domain/errors.js";
import { findCredentialProblems } from "../../domain/secrets.js";
import { HttpToolDefinition } from "../../domain/tool-sources.js";
import { parseInput } from "../../domain/validation.js";
import type { Tool } from "../tool.js";
import type { ToolSource } from "../tool-source.js";
import { httpTool } from "./http-tool.js";

export interface HttpToolSourceOptions {
  /** Where `${NAME}` header references are read, at each call; default `process.env`. */
  env?: Environment;
}

/**
 * The lab config file's `http_tools` as one source. Nothing to start or stop: each call is one
 * request. A definition that would store a secret (a literal header value, a key in the URL) or
 * repeats a name is refused here, naming it.
 */
export function createHttpToolSource(
  definitions: readonly HttpToolDefinition[],
  options: HttpToolSourceOptions = {},
): ToolSource {
  const env = options.env ?? process.env;
  const seen = new Set<string>();
  const tools: Tool[] = definitions.map((input, index) => {
    const where = `http_tools[${index}]`;
    const problems = findCredentialProblems(input);
    if (problems.length > 0) {
      throw new InvalidInputError(
        `${where}: ${problems.map(({ path, message }) => `${path.join(".")}: ${message}`).join("; ")}`,
      );
    }
    const definition = parseInput(HttpToolDefinition, input, where);
    if (seen.has(definition.name)) {
      throw new InvalidInputError(`${where}: duplicate HTTP tool name ${definition.name}`);
    }
    seen.add(definition.name);
    return httpTool(definition, env);
  });
  return {
    name: "http",
    tools: async () => [...tools],
    close: async () => {},
  };
}
