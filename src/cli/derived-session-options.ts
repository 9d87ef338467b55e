import { type Command, Option } from "commander";
import { z } from "zod";
import { InvalidInputError } from "../domain/errors.js";
import { parseYamlFile, readTextFile } from "../files/yaml-file.js";
import type { TurnReport } from "./turn-report.js";

/** The flags of `fork` and `replay` that change the new session's config. */
export interface DerivedSessionFlags {
  config?: string;
  mode?: string;
  model?: string;
  eventModel?: string;
  baseUrl?: string;
  system?: string;
  systemFile?: string;
  title?: string;
}

/** Adds the config flags of `run`, read as overrides of the source session's config. */
export function addDerivedSessionOptions(command: Command, titleDefault: string): Command {
  return command
    .option(
      "--config <file>",
      "a YAML or JSON file of config overrides, merged over the source's config (null removes a key)",
    )
    .addOption(
      new Option("--mode <mode>", "the new session's tool invocation mode").choices([
        "chat_agent_tools",
        "dual_agent",
      ]),
    )
    .option("--model <spec>", "the chat agent's model: sim, sim:NAME or openai:MODEL")
    .option("--event-model <spec>", "the event agent's model (default: follows --model)")
    .option("--base-url <url>", "the chat agent's endpoint (openai: models)")
    .option("--system <text>", "the chat agent's system prompt")
    .option("--system-file <file>", "read the chat agent's system prompt from a file")
    .option("--title <title>", `the new session's title (default: ${titleDefault})`);
}

const Overrides = z.record(z.string(), z.unknown(), { error: "must be a mapping of config keys" });

/**
 * The overrides the flags ask for: the file first, the flags over it. Validated as a whole
 * config once merged over the source's (runtime/derived-config.ts).
 */
export function derivedConfigOverrides(flags: DerivedSessionFlags): Record<string, unknown> {
  if (flags.system !== undefined && flags.systemFile !== undefined) {
    throw new InvalidInputError("give --system or --system-file, not both");
  }
  const file =
    flags.config === undefined
      ? {}
      : parseYamlFile(readTextFile(flags.config, "config file"), flags.config, Overrides, {
          empty: "the config file is empty",
        });
  const chat: Record<string, unknown> = {};
  if (flags.model !== undefined) chat.model = flags.model;
  if (flags.baseUrl !== undefined) chat.base_url = flags.baseUrl;
  const system =
    flags.systemFile !== undefined ? readTextFile(flags.systemFile, "--system-file") : flags.system;
  if (system !== undefined) {
    if (system.trim() === "") throw new InvalidInputError("the system prompt is empty");
    chat.system_prompt = system;
  }
  const overrides: Record<string, unknown> = { ...file };
  if (flags.mode !== undefined) overrides.tool_invocation_mode = flags.mode;
  if (Object.keys(chat).length > 0) {
    const fromFile =
      typeof file.chat_agent === "object" && file.chat_agent !== null ? file.chat_agent : {};
    overrides.chat_agent = { ...fromFile, ...chat };
  }
  if (flags.eventModel !== undefined) {
    const fromFile =
      typeof file.event_agent === "object" && file.event_agent !== null ? file.event_agent : {};
    overrides.event_agent = { ...fromFile, model: flags.eventModel };
  }
  return overrides;
}

/** The exit code of a command that ran turns, as `run` sets it: 1 failed, 130 cancelled. */
export function exitCodeOf(reports: readonly TurnReport[]): number {
  if (reports.some((report) => report.status === "cancelled")) return 130;
  if (reports.some((report) => report.status === "failed")) return 1;
  return 0;
}
