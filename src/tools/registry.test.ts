import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../domain/errors.js";
import { ToolRegistry } from "./registry.js";
import type { Tool, ToolContext } from "./tool.js";

const searchSchema = {
  type: "object",
  properties: {
    query: { type: "string", minLength: 1 },
    limit: { type: "integer", minimum: 1, maximum: 10 },
  },
  required: ["query"],
  additionalProperties: false,
};

const ticketSchema = {
  type: "object",
  properties: {
    title: { type: "string", minLength: 1 },
    priority: { type: "string", enum: ["low", "normal", "high"] },
  },
  required: ["title"],
  additionalProperties: false,
};

function tool(name: string, overrides: Partial<Tool> = {}): Tool {
  return {
    name,
    description: `The ${name} tool.`,
    parameters: { type: "object", properties: {}, additionalProperties: true },
    execute: async (args) => ({ echoed: args }),
    ...overrides,
  };
}

/** A tool that never finishes on its own and records the signal it was given. */
function hangingTool(name = "hang"): { tool: Tool; context: () => ToolContext | undefined } {
  let seen: ToolContext | undefined;
  return {
    tool: tool(name, {
      execute: (_args, context) => {
        seen = context;
        return new Promise(() => {});
      },
    }),
    context: () => seen,
  };
}

const registry = () =>
  new ToolRegistry([
    tool("search", { parameters: searchSchema }),
    tool("ticket", { parameters: ticketSchema }),
  ]);

describe("ToolRegistry lookup", () => {
  it("knows its tools by name, in registration order", () => {
    const tools = registry();
    expect(tools.names()).toEqual(["search", "ticket"]);
    expect(tools.has("search")).toBe(true);
    expect(tools.has("nope")).toBe(false);
    expect(tools.get("ticket")?.name).toBe("ticket");
    expect(tools.get("nope")).toBeUndefined();
  });

  it("refuses duplicate names, naming the name", () => {
    expect(() => new ToolRegistry([tool("a"), tool("b"), tool("a")])).toThrow(InvalidInputError);
    expect(() => new ToolRegistry([tool("a"), tool("a")])).toThrow(/duplicate tool name: a/);
  });

  it("refuses names an endpoint would reject and schemas ajv cannot compile", () => {
    expect(() => new ToolRegistry([tool("bad name")])).toThrow(/invalid tool name "bad name"/);
    expect(
      () => new ToolRegistry([tool("broken", { parameters: { type: "no-such-type" } })]),
    ).toThrow(/tool broken: invalid parameters schema/);
  });

  it("accepts a schema that declares draft 2020-12, as zod emits", () => {
    const tools = new ToolRegistry([
      tool("z", {
        parameters: { $schema: "https://json-schema.org/draft/2020-12/schema", ...searchSchema },
      }),
    ]);
    expect(tools.validate("z", {})).toEqual({ ok: false, error: "query: is required" });
  });

  it("select() keeps just the named tools, in the order given", () => {
    const selected = registry().select(["ticket", "search", "ticket"]);
    expect(selected.names()).toEqual(["ticket", "search"]);
    expect(selected.validate("ticket", { title: "x", priority: "urgent" })).toEqual({
      ok: false,
      error: 'priority: must be one of "low", "normal", "high"',
    });
    expect(registry().select([]).names()).toEqual([]);
  });

  it("select() names an unknown tool and lists the available ones", () => {
    expect(() => registry().select(["search", "weather"])).toThrow(InvalidInputError);
    expect(() => registry().select(["search", "weather"])).toThrow(
      "unknown tool weather; available: search, ticket",
    );
    expect(() => registry().select(["a", "b"])).toThrow("unknown tools a, b; available:");
  });

  it("definitions() gives name, description and a copy of the schema", () => {
    const tools = registry();
    const definitions = tools.definitions();
    expect(definitions).toEqual([
      { name: "search", description: "The search tool.", parameters: searchSchema },
      { name: "ticket", description: "The ticket tool.", parameters: ticketSchema },
    ]);
    for (const definition of definitions) {
      expect(Object.keys(definition).sort()).toEqual(["description", "name", "parameters"]);
    }
    const copy = definitions[0]?.parameters as { required: string[] } | undefined;
    copy?.required.push("limit");
    expect(copy?.required).toEqual(["query", "limit"]);
    expect(tools.get("search")?.parameters).toEqual(searchSchema);
    expect(tools.validate("search", { query: "q" })).toEqual({ ok: true });
  });
});

describe("ToolRegistry.validate", () => {
  const tools = registry();

  it("accepts valid arguments", () => {
    expect(tools.validate("search", { query: "cats", limit: 10 })).toEqual({ ok: true });
    expect(tools.validate("ticket", { title: "Broken", priority: "high" })).toEqual({ ok: true });
  });

  it("names each offending field in one short line", () => {
    expect(tools.validate("search", { limit: 11 })).toEqual({
      ok: false,
      error: "limit: must be <= 10; query: is required",
    });
  });

  it.each([
    ["missing required", "search", {}, "query: is required"],
    ["wrong type", "search", { query: 42 }, "query: must be string"],
    ["not an integer", "search", { query: "q", limit: 2.5 }, "limit: must be integer"],
    ["below the minimum", "search", { query: "q", limit: 0 }, "limit: must be >= 1"],
    ["empty string", "search", { query: "" }, "query: must not be empty"],
    [
      "outside the enum",
      "ticket",
      { title: "t", priority: "urgent" },
      'priority: must be one of "low", "normal", "high"',
    ],
    [
      "an additional property",
      "search",
      { query: "q", q: "x" },
      "q: is not allowed (allowed: query, limit)",
    ],
    ["not an object", "search", "cats", "arguments: must be object"],
    ["null", "search", null, "arguments: must be object"],
  ])("%s", (_case, name, args, error) => {
    expect(tools.validate(name, args)).toEqual({ ok: false, error });
  });

  it("names nested fields by path", () => {
    const nested = new ToolRegistry([
      tool("nested", {
        parameters: {
          type: "object",
          properties: {
            items: {
              type: "array",
              items: {
                type: "object",
                properties: { name: { type: "string" } },
                required: ["name"],
              },
            },
          },
        },
      }),
    ]);
    expect(nested.validate("nested", { items: [{ name: "a" }, { name: 1 }, {}] })).toEqual({
      ok: false,
      error: "items[1].name: must be string; items[2].name: is required",
    });
  });

  it("insists on an object even when the schema would allow anything", () => {
    const loose = new ToolRegistry([tool("loose", { parameters: {} })]);
    expect(loose.validate("loose", [1, 2])).toEqual({
      ok: false,
      error: "arguments: must be object",
    });
    expect(loose.validate("loose", {})).toEqual({ ok: true });
  });

  it("reports an unknown tool with the available ones", () => {
    expect(tools.validate("weather", {})).toEqual({
      ok: false,
      error: "unknown tool weather; available: search, ticket",
    });
    expect(new ToolRegistry([]).validate("x", {})).toEqual({
      ok: false,
      error: "unknown tool x; available: (none)",
    });
  });
});

describe("ToolRegistry.run", () => {
  it("executes a valid call and measures its latency", async () => {
    const tools = new ToolRegistry([
      tool("slow_echo", {
        parameters: searchSchema,
        execute: async (args) => {
          await new Promise((resolve) => setTimeout(resolve, 20));
          return { got: args.query };
        },
      }),
    ]);
    const result = await tools.run("slow_echo", { query: "q" });
    expect(result).toMatchObject({ ok: true, value: { got: "q" } });
    expect(result.latency_ms).toBeGreaterThanOrEqual(15);
    expect(result.latency_ms).toBeLessThan(1_000);
  });

  it("accepts a tool whose execute returns synchronously or throws synchronously", async () => {
    const tools = new ToolRegistry([
      tool("sync", { execute: (() => 7) as unknown as Tool["execute"] }),
      tool("sync_throw", {
        execute: () => {
          throw new Error("sync boom");
        },
      }),
    ]);
    expect(await tools.run("sync", {})).toMatchObject({ ok: true, value: 7 });
    expect(await tools.run("sync_throw", {})).toMatchObject({
      ok: false,
      kind: "failed",
      error: "sync boom",
    });
  });

  it("does not execute an unknown tool or invalid arguments", async () => {
    let calls = 0;
    const tools = new ToolRegistry([
      tool("search", {
        parameters: searchSchema,
        execute: async () => {
          calls++;
          return null;
        },
      }),
    ]);
    expect(await tools.run("weather", {})).toEqual({
      ok: false,
      kind: "unknown_tool",
      error: "unknown tool weather; available: search",
      latency_ms: 0,
    });
    expect(await tools.run("search", { limit: 0 })).toEqual({
      ok: false,
      kind: "invalid_arguments",
      error: "limit: must be >= 1; query: is required",
      latency_ms: 0,
    });
    expect(calls).toBe(0);
  });

  it("turns a thrown error into a failure with its message", async () => {
    const tools = new ToolRegistry([
      tool("boom", {
        execute: async () => {
          throw new Error("search backend timed out");
        },
      }),
      tool("weird", {
        execute: async () => {
          throw "plain string";
        },
      }),
    ]);
    const result = await tools.run("boom", {});
    expect(result).toMatchObject({ ok: false, kind: "failed", error: "search backend timed out" });
    expect(result.latency_ms).toBeGreaterThanOrEqual(0);
    expect(await tools.run("weird", {})).toMatchObject({ kind: "failed", error: "plain string" });
  });

  it("times out a slow tool quickly and aborts its signal", async () => {
    const { tool: hang, context } = hangingTool();
    const tools = new ToolRegistry([hang]);
    const startedAt = performance.now();
    const result = await tools.run("hang", {}, { timeout_ms: 30 });
    const took = performance.now() - startedAt;
    expect(result).toMatchObject({ ok: false, kind: "timeout", error: "timed out after 30 ms" });
    expect(result.latency_ms).toBeGreaterThanOrEqual(25);
    expect(took).toBeLessThan(1_000);
    expect(context()?.signal.aborted).toBe(true);
    expect(context()?.signal.reason).toMatchObject({ name: "TimeoutError" });
  });

  it("uses the tool's own timeout when the call gives none", async () => {
    const { tool: hang, context } = hangingTool();
    const tools = new ToolRegistry([{ ...hang, timeout_ms: 20 }]);
    expect(await tools.run("hang", {})).toMatchObject({
      kind: "timeout",
      error: "timed out after 20 ms",
    });
    expect(context()?.signal.aborted).toBe(true);
  });

  it("ends as interrupted soon after the caller aborts, and aborts the tool's signal", async () => {
    const { tool: hang, context } = hangingTool();
    const tools = new ToolRegistry([hang]);
    const controller = new AbortController();
    const startedAt = performance.now();
    const running = tools.run("hang", {}, { signal: controller.signal });
    // Armed once the call has started its clock: armed before, the call's own start (checks,
    // a busy machine) ate into the 20 ms and its latency read 13.5 ms in a full run.
    setTimeout(() => controller.abort(), 20);
    const result = await running;
    const took = performance.now() - startedAt;
    expect(result).toMatchObject({ ok: false, kind: "interrupted", error: "interrupted" });
    expect(result.latency_ms).toBeGreaterThanOrEqual(15);
    expect(took).toBeLessThan(1_000);
    expect(context()?.signal.aborted).toBe(true);
  });

  it("does not start a tool when the caller has already aborted", async () => {
    const { tool: hang, context } = hangingTool();
    const tools = new ToolRegistry([hang]);
    const result = await tools.run("hang", {}, { signal: AbortSignal.abort() });
    expect(result).toEqual({ ok: false, kind: "interrupted", error: "interrupted", latency_ms: 0 });
    expect(context()).toBeUndefined();
  });

  it("leaves the tool's signal alone when the call succeeds, and ignores a later abort", async () => {
    let seen: AbortSignal | undefined;
    const tools = new ToolRegistry([
      tool("quick", {
        execute: async (_args, { signal }) => {
          seen = signal;
          return "done";
        },
      }),
    ]);
    const controller = new AbortController();
    const result = await tools.run("quick", {}, { signal: controller.signal, timeout_ms: 1_000 });
    controller.abort();
    expect(result).toMatchObject({ ok: true, value: "done" });
    expect(seen?.aborted).toBe(false);
  });
});

describe("ToolRegistry otherwise", () => {
  it("runs calls to names it does not have, under the name called, and is never offered", async () => {
    const seen: { name: string | undefined; args: unknown }[] = [];
    const registry = new ToolRegistry([tool("search", { parameters: searchSchema })], {
      otherwise: tool("anything", {
        execute: async (args, context: ToolContext) => {
          seen.push({ name: context.tool_name, args });
          return "handled";
        },
      }),
    });
    expect(registry.runsEveryCall).toBe(true);
    expect(registry.names()).toEqual(["search"]);
    expect(registry.definitions().map((definition) => definition.name)).toEqual(["search"]);
    const selected = registry.select(["search"]);
    expect(selected.runsEveryCall).toBe(true);
    await expect(selected.run("rm_rf", { path: "/" })).resolves.toMatchObject({
      ok: true,
      value: "handled",
    });
    expect(seen).toEqual([{ name: "rm_rf", args: { path: "/" } }]);
    // A tool it has is still its own, validated by its own schema.
    await expect(registry.run("search", {})).resolves.toMatchObject({
      ok: false,
      kind: "invalid_arguments",
    });
    expect(new ToolRegistry([tool("search")]).runsEveryCall).toBe(false);
    await expect(new ToolRegistry([]).run("rm_rf", {})).resolves.toMatchObject({
      ok: false,
      kind: "unknown_tool",
    });
  });
});
