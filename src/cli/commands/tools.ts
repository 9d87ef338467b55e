import type { Command } from "commander";
import type { CommandContext } from "../command-context.js";
import { formatTable, truncate, writeJson } from "../output.js";

export function registerToolsCommand(program: Command, context: CommandContext): void {
  program
    .command("tools")
    .description(
      "List every tool the lab can offer a session: the built-ins and the tools of the lab config file's MCP servers and HTTP tools (which this starts).",
    )
    .option(
      "--json",
      "print { lab_config, tools: [{ name, source, description, parameters, requires_approval }] }",
    )
    .addHelpText(
      "after",
      `
A session selects tools by name in its config's tools (MCP tools are SERVER__TOOL; SERVER__*
selects all of a server's). Declared tools live in the session config or a suite, not here.

Examples:
  $ agent-lab tools
  $ agent-lab --lab-config ./agent-lab.yaml tools --json`,
    )
    .action(async (flags: { json?: boolean }, command: Command) => {
      const { io } = context;
      const providers = context.providers(command);
      try {
        const tools = await providers.tools.list();
        if (flags.json) {
          writeJson(io, { lab_config: providers.lab_config, tools });
          return;
        }
        io.stdout.write(
          `${formatTable(tools, [
            { header: "NAME", value: (tool) => tool.name },
            { header: "SOURCE", value: (tool) => tool.source },
            { header: "APPROVAL", value: (tool) => (tool.requires_approval ? "required" : "") },
            { header: "DESCRIPTION", value: (tool) => truncate(tool.description, 60) },
          ])}\n`,
        );
        if (providers.lab_config === null) {
          io.stdout.write("(no lab config file: built-in tools only)\n");
        }
      } finally {
        await providers.tools.close();
      }
    });
}
