import { InvalidInputError } from "../domain/errors.js";
import type { LabSessionConfig } from "../domain/session-config.js";
import type { ToolProvider } from "../runtime/turn-providers.js";
import { createBuiltinTools } from "../tools/builtin/index.js";
import { createDeclaredTool } from "../tools/declared/index.js";
import { ToolRegistry } from "../tools/registry.js";
import type { Tool } from "../tools/tool.js";
import type { ToolSource } from "../tools/tool-source.js";

export interface LabToolProviderOptions {
  /** The in-process tools; default the built-ins. */
  builtins?: readonly Tool[] | undefined;
  /** The lab config file's sources (MCP servers, HTTP tools); started on first need. */
  sources?: readonly ToolSource[] | undefined;
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

/**
 * The tools a config selects: the built-ins and the sources' tools named in `tools`. A source is
 * asked for its tools only when a name is not a built-in, so an MCP server nobody selects never
 * starts.
 */
export function createToolProvider(options: LabToolProviderOptions = {}): LabToolProvider {
  const builtins = options.builtins ?? createBuiltinTools();
  const sources = options.sources ?? [];
  const builtinNames = new Set(builtins.map((tool) => tool.name));

  async function sourceTools(signal?: AbortSignal): Promise<Tool[]> {
    const lists = await Promise.all(sources.map((source) => source.tools(signal)));
    return lists.flat();
  }

  return {
    async toolsFor(config: LabSessionConfig, signal?: AbortSignal): Promise<ToolRegistry> {
      const declared = declaredTools(config);
      const declaredNames = new Set(declared.map((tool) => tool.name));
      const needsSources = config.tools.some(
        (name) => !builtinNames.has(name) && !declaredNames.has(name),
      );
      const offered = [...builtins, ...(needsSources ? await sourceTools(signal) : [])];
      for (const tool of offered) {
        if (declaredNames.has(tool.name)) {
          throw new InvalidInputError(
            `declared tool ${tool.name} has the name of a ${tool.source ?? "builtin"} tool; rename it`,
          );
        }
      }
      // Declared tools are always offered; naming one in `tools` too is harmless.
      const selected = config.tools.filter((name) => !declaredNames.has(name));
      return new ToolRegistry([...offered, ...declared]).select([...selected, ...declaredNames]);
    },
    async list(signal?: AbortSignal): Promise<ToolListing[]> {
      const tools = [...builtins, ...(await sourceTools(signal))];
      // Built once to refuse duplicates and bad schemas the same way a turn would.
      new ToolRegistry(tools);
      return tools.map(listing);
    },
    async close(): Promise<void> {
      await Promise.allSettled(sources.map((source) => source.close()));
    },
  };
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
