import { matchArguments } from "../../domain/match-argument.js";
import type { DeclaredTool, MockOutcome } from "../../domain/tool-sources.js";
import type { Tool } from "../tool.js";

/**
 * A tool declared inline (session config `declared_tools`, a suite's `tools`): it answers from its
 * `mock` and touches nothing, so any request may carry one. An `error` outcome is thrown, which
 * the kernel turns into a tool error result the model can read, as it would a real failure.
 */
export function createDeclaredTool(definition: DeclaredTool): Tool {
  const { mock } = definition;
  return {
    name: definition.name,
    description: definition.description,
    parameters: definition.parameters,
    requires_approval: definition.requires_approval,
    source: "declared",
    async execute(args) {
      if (!("cases" in mock)) return outcome(mock);
      const hit = mock.cases.find((candidate) => matchArguments(candidate.when, args));
      if (hit !== undefined) return outcome(hit);
      if (mock.default !== undefined) return outcome(mock.default);
      throw new Error(
        `no mock case of ${definition.name} matches these arguments, and it has no default`,
      );
    },
  };
}

function outcome(chosen: MockOutcome | { error: string } | { result?: unknown }): unknown {
  if ("error" in chosen && typeof chosen.error === "string") throw new Error(chosen.error);
  return "result" in chosen ? chosen.result : null;
}
