import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { LabConfigFile } from "../domain/tool-sources.js";
import { parseYamlFile, readTextFile, type YamlProblem } from "../files/yaml-file.js";
import { isModelString, MODEL_STRING_HELP } from "../providers/create-chat-model.js";
import { createHttpToolSource } from "../tools/http/index.js";
import { createMcpToolSource } from "../tools/mcp/index.js";
import type { ToolSource } from "../tools/tool-source.js";
import type { PrefixedToolSource } from "./tool-provider.js";

/**
 * The lab config file, `agent-lab.yaml`: what this machine's lab may run (MCP servers, HTTP
 * tools). Only its owner writes it; requests and imports may only select its tools by name.
 */

export const LAB_CONFIG_ENV = "AGENT_LAB_CONFIG";
export const LAB_CONFIG_FILE_NAME = "agent-lab.yaml";

export interface LabConfigLocation {
  /** `--lab-config`. */
  flag?: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  /** The database file; `agent-lab.yaml` beside it is read when present. */
  database_path?: string | undefined;
}

/**
 * `--lab-config`, else `$AGENT_LAB_CONFIG`, else `agent-lab.yaml` next to the database when it
 * exists; null when none. A file named explicitly must exist (loading it says so).
 */
export function findLabConfig(location: LabConfigLocation): string | null {
  if (location.flag) return location.flag;
  const fromEnv = location.env[LAB_CONFIG_ENV];
  if (fromEnv) return fromEnv;
  if (location.database_path === undefined || location.database_path === ":memory:") return null;
  const beside = join(dirname(location.database_path), LAB_CONFIG_FILE_NAME);
  return existsSync(beside) ? beside : null;
}

/** Parses the file; errors name file:line:col and the field, as suite files' do. */
export function parseLabConfig(text: string, fileName: string): LabConfigFile {
  return parseYamlFile(text, fileName, LabConfigFile, {
    empty:
      "the file is empty; give mcp_servers, http_tools, suites_dirs or upstreams (or remove the file)",
    problems: (_raw, parsed) => upstreamReferenceProblems(parsed),
  });
}

/**
 * An upstream's `event_model` names another upstream or a lab model string: checked when the file
 * is read, so a typo stops `serve` instead of failing every dual_agent request that reaches it.
 */
function upstreamReferenceProblems(config: LabConfigFile): YamlProblem[] {
  return Object.entries(config.upstreams).flatMap(([name, upstream]) => {
    const model = upstream.event_model;
    if (model === undefined || isModelString(model) || Object.hasOwn(config.upstreams, model)) {
      return [];
    }
    return [
      {
        path: ["upstreams", name, "event_model"],
        message: `${JSON.stringify(model)} is neither an upstream's name nor a model string (${MODEL_STRING_HELP})`,
      },
    ];
  });
}

export function loadLabConfig(path: string): LabConfigFile {
  return parseLabConfig(readTextFile(path, "lab config file"), path);
}

/** The file's `suites_dirs`, relative ones resolved from the file's own folder; none without a file. */
export function labSuitesDirs(path: string | null): string[] {
  if (path === null) return [];
  const folder = dirname(resolve(path));
  return loadLabConfig(path).suites_dirs.map((dir) => resolve(folder, dir));
}

/**
 * One source per MCP server (its tools are `SERVER__TOOL`) and one for the HTTP tools. Each is
 * created on its first use, not here: a server is started only when a session selects its tools.
 */
export function labToolSources(config: LabConfigFile): PrefixedToolSource[] {
  const sources: PrefixedToolSource[] = Object.entries(config.mcp_servers).map(
    ([name, definition]) => ({
      prefix: name,
      source: lazySource(`mcp:${name}`, () => createMcpToolSource(name, definition)),
    }),
  );
  if (config.http_tools.length > 0) {
    sources.push({
      prefix: null,
      source: lazySource("http", () => createHttpToolSource(config.http_tools)),
    });
  }
  return sources;
}

function lazySource(name: string, create: () => ToolSource): ToolSource {
  let created: ToolSource | null = null;
  return {
    name,
    // Async, so a definition refused at creation rejects like any source that cannot start.
    async tools(signal) {
      created ??= create();
      return created.tools(signal);
    },
    async close() {
      await created?.close();
    },
  };
}
