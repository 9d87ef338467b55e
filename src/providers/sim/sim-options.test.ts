import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../domain/errors.js";
import { SimChatModel } from "./sim-chat-model.js";
import { parseSimModelSettings, SIM_REALISTIC_TIMING } from "./sim-options.js";

describe("sim options", () => {
  it("defaults to an instant, well-behaved model with a fixed seed", () => {
    expect(new SimChatModel().options).toEqual({
      first_token_ms: 0,
      tokens_per_second: 0,
      malformed_arguments_rate: 0,
      reasoning: false,
      seed: 42,
    });
    expect(new SimChatModel({ options: { ...SIM_REALISTIC_TIMING } }).options).toMatchObject({
      first_token_ms: 300,
      tokens_per_second: 80,
    });
  });

  it.each([
    [{ options: { first_token_ms: -5 } }, "options.first_token_ms"],
    [{ options: { tokens_per_second: Number.POSITIVE_INFINITY } }, "options.tokens_per_second"],
    [{ options: { malformed_arguments_rate: 1.5 } }, "options.malformed_arguments_rate"],
    [{ options: { seed: 1.5 } }, "options.seed"],
    [{ options: { seed: "7" } }, "options.seed"],
    [{ options: { reasoning: "yes" } }, "options.reasoning"],
    [{ options: { first_token_ms: 10, temperature: 1 } }, "temperature"],
    [{ name: "" }, "name"],
    [{ name: "two words" }, "name"],
  ])("rejects %j naming %s", (settings, field) => {
    let error: unknown;
    try {
      parseSimModelSettings(settings);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).code).toBe("invalid_input");
    expect((error as Error).message).toContain(field);
  });
});
