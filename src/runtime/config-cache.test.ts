import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../domain/errors.js";
import { LabSessionConfig } from "../domain/session-config.js";
import { parseInput } from "../domain/validation.js";
import { parseSessionConfig } from "./config-cache.js";

const deep = (levels: number): unknown => {
  let value: unknown = {};
  for (let level = 1; level < levels; level++) value = { inner: value };
  return value;
};

describe("parseSessionConfig", () => {
  it("parses a config text once: the same frozen config for an equal config, zod's for others", () => {
    const first = parseSessionConfig({ tool_invocation_mode: "dual_agent", max_rounds: 3 }, "c");
    const again = parseSessionConfig({ tool_invocation_mode: "dual_agent", max_rounds: 3 }, "c");
    expect(again).toBe(first);
    expect(Object.isFrozen(first.limits)).toBe(true);
    expect(first).toStrictEqual(
      parseInput(LabSessionConfig, { tool_invocation_mode: "dual_agent", max_rounds: 3 }, "c"),
    );
  });

  it.each([
    ["a number JSON would change", { max_rounds: Number.NaN }],
    ["a config nested past every limit", { chat_agent: { options: deep(100_000) } }],
  ])("refuses what zod refuses, with zod's message: %s", (_label, config) => {
    const expected = (() => {
      try {
        parseInput(LabSessionConfig, config, "config");
      } catch (error) {
        return (error as Error).message;
      }
      return null;
    })();
    expect(expected).not.toBeNull();
    expect(() => parseSessionConfig(config, "config")).toThrow(InvalidInputError);
    expect(() => parseSessionConfig(config, "config")).toThrow(expected as string);
  });
});
