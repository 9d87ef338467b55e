import { InvalidInputError } from "../domain/errors.js";
import type { LabSessionConfig } from "../domain/session-config.js";
import type { ToolProvider } from "../runtime/turn-providers.js";
import { createBuiltinTools } from "../tools/builtin/index.js";
import { createDeclaredTool } from "../tools/declared/index.js";
import { ToolRegistry } from "../tools/registry.js";
import type { Tool } from "../tools/tool.js";
import type { ToolSource } from "../tools/tool-source.js";

/** A source of the lab config file, and the name prefix its tools carry (MCP: `SERVER`). */
export interface PrefixedToolSource {
  source: ToolSource;
  /** Tools named `PREFIX__TOOL` come from this source; null: any other name (HTTP tools). */
  prefix: string | null;
}

export interface LabToolProviderOptions {
  /** The in-process tools; default the built-ins. */
  builtins?: readonly Tool[] | undefined;
  /** The lab config file's sources (MCP servers, HTTP tools); started on first need. */
  sources?: readonly PrefixedToolSource[] | undefined;
}

/** A listed tool, for `agent-lab tools` and `GET /api/tools`. */
export interface ToolListing {
  name: string;
  source: string;
  description: string;
  parameters: Record<string, unknown>;
  requires_approval: boolean;
}

export interface LabToolProvider extends ToolProvider {
  /** Every tool the lab can offer (starting every source), without a session's declared tools. */
  list(signal?: AbortSignal): Promise<ToolListing[]>;
  /** Stops every source that was started; idempotent. */
  close(): Promise<void>;
}

const SEPARATOR = "__";
/** `SERVER__*` in `tools` selects every tool of that MCP server. */
const ALL_OF_SOURCE = `${SEPARATOR}*`;
/** Distinct built-in selections kept compiled (a config names a handful; experiments a few more). */
const MAX_KEPT_REGISTRIES = 64;

/**
 * The tools a config selects: the built-ins, the sources' tools named in `tools`, and the config's
 * declared tools, which are always offered. A source is asked for its tools only when `tools`
 * names one of them (`SERVER__TOOL` asks that MCP server only), so a server nobody selects never
 * starts.
 */
export function createToolProvider(options: LabToolProviderOptions = {}): LabToolProvider {
  const builtins = options.builtins ?? createBuiltinTools();
  const sources = options.sources ?? [];
  const builtinNames = new Set(builtins.map((tool) => tool.name));
  /**
   * Registries of built-ins only, by the selection's names: every turn of a session asks for the
   * same ones, and a registry compiles each tool's schema (most of what a turn's tools cost).
   * Built-ins do not change, so neither does their registry; sources and declared tools may, so
   * selections with them are built each time.
   */
  const builtinRegistries = new Map<string, ToolRegistry>();
  /**
   * The same registries by the config itself, when its selection cannot change (the runtime's
   * parsed configs are frozen, and a session's every turn shares one): not even the names are
   * read again.
   */
  const byConfig = new WeakMap<LabSessionConfig, ToolRegistry>();
  /** A built-ins-only registry, kept for its config too when that config cannot change. */
  const servedAgain = (config: LabSessionConfig, registry: ToolRegistry) => {
    if (selectionFrozen(config)) byConfig.set(config, registry);
    return registry;
  };

  /** The sources a name may come from: its prefix's, else the unprefixed ones. */
  function sourcesOf(name: string): PrefixedToolSource[] {
    const at = name.indexOf(SEPARATOR);
    const prefix = at > 0 ? name.slice(0, at) : null;
    const owners = sources.filter((entry) => entry.prefix !== null && entry.prefix === prefix);
    return owners.length > 0 ? owners : sources.filter((entry) => entry.prefix === null);
  }

  async function toolsOf(
    entries: readonly PrefixedToolSource[],
    signal?: AbortSignal,
  ): Promise<Tool[]> {
    const lists = await Promise.all(entries.map((entry) => entry.source.tools(signal)));
    return lists.flat();
  }

  return {
    async toolsFor(config: LabSessionConfig, signal?: AbortSignal): Promise<ToolRegistry> {
      const same = byConfig.get(config);
      if (same !== undefined) return same;
      const declared = declaredTools(config);
      const declaredNames = new Set(declared.map((tool) => tool.name));
      for (const name of declaredNames) {
        const owner = sources.find(
          (entry) => entry.prefix !== null && name.startsWith(`${entry.prefix}${SEPARATOR}`),
        );
        // Checked by name, without starting the server: SERVER__… belongs to that server.
        if (owner !== undefined) {
          throw new InvalidInputError(
            `declared tool ${name} has the name of a mcp tool (${owner.prefix}${SEPARATOR}… names belong to MCP server ${owner.prefix}); rename it`,
          );
        }
      }
      const wanted = config.tools.filter(
        (name) => !builtinNames.has(name) && !declaredNames.has(name),
      );
      const builtinOnly = declared.length === 0 && wanted.length === 0;
      const key = builtinOnly ? JSON.stringify(config.tools) : null;
      const known = key === null ? undefined : builtinRegistries.get(key);
      if (known !== undefined) return servedAgain(config, known);
      const needed = [...new Set(wanted.flatMap(sourcesOf))];
      const fromSources = await toolsOf(needed, signal);
      const offered = [...builtins, ...fromSources];
      for (const tool of offered) {
        if (declaredNames.has(tool.name)) {
          throw new InvalidInputError(
            `declared tool ${tool.name} has the name of a ${tool.source ?? "builtin"} tool; rename it`,
          );
        }
      }
      const selected = config.tools.flatMap((name) => {
        if (declaredNames.has(name)) return [];
        if (!name.endsWith(ALL_OF_SOURCE)) return [name];
        const prefix = name.slice(0, -1);
        const all = fromSources.filter((tool) => tool.name.startsWith(prefix));
        if (all.length === 0) {
          throw new InvalidInputError(`${name} selects nothing: no tool is named ${prefix}…`);
        }
        return all.map((tool) => tool.name);
      });
      // Declared tools are always offered; naming one in `tools` too is harmless.
      const registry = new ToolRegistry([...offered, ...declared]).select([
        ...selected,
        ...declaredNames,
      ]);
      if (key !== null) {
        if (builtinRegistries.size >= MAX_KEPT_REGISTRIES) builtinRegistries.clear();
        builtinRegistries.set(key, registry);
        return servedAgain(config, registry);
      }
      return registry;
    },
    async list(signal?: AbortSignal): Promise<ToolListing[]> {
      const tools = [...builtins, ...(await toolsOf(sources, signal))];
      // Built once to refuse duplicates and bad schemas the same way a turn would.
      new ToolRegistry(tools);
      return tools.map(listing);
    },
    async close(): Promise<void> {
      await Promise.allSettled(sources.map((entry) => entry.source.close()));
    },
  };
}

/** Whether what selects a config's tools (`tools`, `declared_tools`) can no longer change. */
function selectionFrozen(config: LabSessionConfig): boolean {
  return (
    Object.isFrozen(config) &&
    Object.isFrozen(config.tools) &&
    (config.declared_tools === undefined || Object.isFrozen(config.declared_tools))
  );
}

function declaredTools(config: LabSessionConfig): Tool[] {
  const definitions = config.declared_tools ?? [];
  const seen = new Set<string>();
  for (const { name } of definitions) {
    if (seen.has(name)) throw new InvalidInputError(`declared tool ${name} is declared twice`);
    seen.add(name);
  }
  return definitions.map(createDeclaredTool);
}

export function listing(tool: Tool): ToolListing {
  return {
    name: tool.name,
    source: tool.source ?? "builtin",
    description: tool.description,
    parameters: tool.parameters,
    requires_approval: tool.requires_approval === true,
  };
}
