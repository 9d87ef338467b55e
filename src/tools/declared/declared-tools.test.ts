import { describe, expect, it } from "vitest";
import { answerRound, fakeServerConfig, toolRound } from "../../../test/runtime/scripted-turns.js";
import {
  collectTurn,
  eventsOfType,
  MODES,
  useServerLab,
} from "../../../test/runtime/turn-harness.js";
import { createLabProviders } from "../../composition/lab-providers.js";
import { Suite } from "../../domain/experiment.js";
import { DeclaredTool, type DeclaredToolInput } from "../../domain/tool-sources.js";
import { runExperiment } from "../../experiments/run-experiment.js";
import { ToolRegistry } from "../registry.js";
import { createDeclaredTool } from "./index.js";

const LOOKUP: DeclaredToolInput = {
  name: "lookup_order",
  description: "Look an order up by its id",
  parameters: {
    type: "object",
    properties: { order_id: { type: "string" } },
    required: ["order_id"],
  },
  mock: {
    cases: [
      { when: { order_id: "A1" }, result: { status: "shipped" } },
      { when: { order_id: { regex: "^X" } }, error: "order archived" },
    ],
  },
};

function registryOf(...inputs: DeclaredToolInput[]): ToolRegistry {
  return new ToolRegistry(inputs.map((input) => createDeclaredTool(DeclaredTool.parse(input))));
}

describe("createDeclaredTool", () => {
  it("answers a fixed result, or a fixed error as an error result", async () => {
    const tools = registryOf(
      { name: "fixed", mock: { result: { ok: 1 } } },
      { name: "broken", mock: { error: "service down" } },
    );
    expect(await tools.run("fixed", {})).toMatchObject({ ok: true, value: { ok: 1 } });
    expect(await tools.run("broken", {})).toMatchObject({
      ok: false,
      kind: "failed",
      error: "service down",
    });
  });

  it("takes the first case whose matchers all fit, then the default", async () => {
    const tools = registryOf({
      ...LOOKUP,
      mock: {
        cases: [
          { when: { order_id: "A1", verbose: true }, result: "first" },
          { when: { order_id: { contains: "a" } }, result: "second" },
          { when: { order_id: "A1" }, result: "third" },
        ],
        default: { result: "fallback" },
      },
    });
    expect(await tools.run("lookup_order", { order_id: "A1", verbose: true })).toMatchObject({
      value: "first",
    });
    expect(await tools.run("lookup_order", { order_id: "A1" })).toMatchObject({ value: "second" });
    expect(await tools.run("lookup_order", { order_id: "Z9" })).toMatchObject({
      value: "fallback",
    });
  });

  it("without a default, an unmatched call is an error result naming the tool", async () => {
    const tools = registryOf(LOOKUP);
    expect(await tools.run("lookup_order", { order_id: "XB" })).toMatchObject({
      ok: false,
      error: "order archived",
    });
    const missed = await tools.run("lookup_order", { order_id: "B2" });
    expect(missed).toMatchObject({ ok: false, kind: "failed" });
    expect(!missed.ok && missed.error).toMatch(/no mock case of lookup_order matches/);
  });
});

describe.each(MODES)("declared tools in a turn, %s", (mode) => {
  const lab = useServerLab();

  it("offers the declared tool beside the selected ones and stores its result", async () => {
    lab.server.enqueue(
      toolRound(mode, [{ id: "call_1", name: "lookup_order", arguments: '{"order_id":"A1"}' }]),
      answerRound("It has shipped."),
    );
    const { end, events, error } = await collectTurn({
      store: lab.store,
      session_id: "s",
      message: "where is order A1?",
      config: fakeServerConfig(mode, lab.server, {
        tools: ["mock_search"],
        declared_tools: [LOOKUP],
      }),
      model_dependencies: { env: {} },
    });
    expect(error).toBeNull();
    expect(end?.status).toBe("completed");
    const [result] = eventsOfType(events, "tool_result");
    expect(result).toMatchObject({ event_name: "lookup_order", ok: true });
    expect(JSON.parse(result?.content ?? "null")).toEqual({ status: "shipped" });
    const stored = lab.store.listMessages("s").filter((message) => message.role === "tool");
    expect(stored).toHaveLength(1);
    expect(stored[0]?.content).toContain("shipped");
    // What the model was offered: the selected built-in and the declared tool.
    const offered = JSON.stringify(lab.server.requests[0]?.body);
    expect(offered).toContain("lookup_order");
    expect(offered).toContain("mock_search");
    expect(offered).not.toContain("mock_ticket");
  });

  it("refuses a declared tool named like a built-in before storing a session", async () => {
    const { error } = await collectTurn({
      store: lab.store,
      session_id: "s",
      message: "hello",
      config: fakeServerConfig(mode, lab.server, {
        declared_tools: [{ name: "mock_search", mock: { result: 1 } }],
      }),
      model_dependencies: { env: {} },
    });
    expect(String(error)).toMatch(/declared tool mock_search has the name of a builtin tool/);
    expect(lab.store.getSession("s")).toBeNull();
    expect(lab.server.requests).toHaveLength(0);
  });
});

describe("declared tools in a suite", () => {
  const lab = useServerLab();

  it("suite-level and per-scenario tools become each run's declared_tools, and are scored", async () => {
    const suite = Suite.parse({
      name: "declared",
      config: {
        chat_agent: { base_url: lab.server.baseUrl, options: { max_retries: 0 } },
        tools: [],
      },
      matrix: { chat_models: ["openai:fake-model"], event_models: ["sim"] },
      concurrency: 1,
      tools: [{ ...LOOKUP, mock: { result: { status: "suite" } } }],
      scenarios: [
        {
          id: "suite-tool",
          category: "simple",
          turns: [
            {
              user: "where is order A1?",
              expect: { tools: [{ name: "lookup_order", arguments: { order_id: "A1" } }] },
            },
          ],
        },
        {
          id: "scenario-tool",
          category: "simple",
          tools: [LOOKUP, { name: "refund", mock: { result: "refunded" } }],
          turns: [
            {
              user: "refund A1",
              expect: { tools: [{ name: "refund" }], answer_contains: ["refunded"] },
            },
          ],
        },
      ],
    });
    // Runs go repetition by repetition, scenario by scenario, across the cells (both modes).
    for (const mode of MODES) {
      lab.server.enqueue(
        toolRound(mode, [{ id: "c1", name: "lookup_order", arguments: '{"order_id":"A1"}' }]),
        answerRound("Shipped."),
      );
    }
    for (const mode of MODES) {
      lab.server.enqueue(
        toolRound(mode, [{ id: "c2", name: "refund", arguments: "{}" }]),
        answerRound("Order refunded."),
      );
    }
    const outcome = await runExperiment({
      store: lab.store,
      suite,
      providers: createLabProviders({ model_dependencies: { env: {} } }),
    });
    expect(outcome.errors).toEqual([]);
    expect(outcome.finished).toBe(4);
    const runs = outcome.report.runs;
    expect(runs).toHaveLength(4);
    for (const run of runs) expect(run.score.success, run.score.failures.join("; ")).toBe(true);
    const sessions = lab.store.findSessionsByExperiment(outcome.experiment_id);
    const toolResults = sessions.flatMap((session) =>
      lab.store
        .listMessages(session.id)
        .filter((message) => message.role === "tool")
        .map((message) => message.content),
    );
    // The scenario's lookup_order replaced the suite's (no "suite" status in its runs).
    expect(toolResults.filter((text) => text.includes('"suite"'))).toHaveLength(2);
    expect(toolResults.filter((text) => text.includes("refunded"))).toHaveLength(2);
  });
});
