import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { createLabProviders } from "../composition/lab-providers.js";
import type { ToolInvocationMode } from "../domain/session-config.js";
import { McpServerDefinition } from "../domain/tool-sources.js";
import { runTurn } from "../runtime/run-turn.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { createMcpToolSource } from "../tools/mcp/index.js";
import { ToolRegistry } from "../tools/registry.js";
import type { Tool } from "../tools/tool.js";
import { type Figure, median, printFigures } from "./measure.js";
import { OneCallModel } from "./one-call-model.js";
import { TimedModel } from "./scripted-model.js";

/**
 * What the lab adds to a tool call, for an in-process (declared-style) tool and for an MCP tool
 * over stdio (server-everything's `echo`), each against calling the tool directly in the same run:
 * the function itself, or the SDK client on its own connection to another copy of the server.
 * Then whole turns on an instant model with each tool, the model's and the tool's own time taken
 * out: what remains is the lab's cost per round.
 */

const MODES: ToolInvocationMode[] = ["chat_agent_tools", "dual_agent"];
const CALLS = 2_000;
const TURNS = 220;
const WARM_UP = 20;

/** The devDependency's entry; the package exports no path to resolve it by. */
function everythingEntry(): string {
  const entry = fileURLToPath(
    new URL(
      "../../node_modules/@modelcontextprotocol/server-everything/dist/index.js",
      import.meta.url,
    ),
  );
  if (!existsSync(entry)) {
    throw new Error(
      `tools bench: ${entry} is missing; run it from a checkout with devDependencies`,
    );
  }
  return entry;
}

/**
 * Median per-call times of two calls, alternated call by call after a warm-up, so the machine's
 * drift (other processes, JIT, GC) falls on both alike.
 */
async function timePair(
  first: () => Promise<unknown>,
  second: () => Promise<unknown>,
  calls: number,
): Promise<[number, number]> {
  for (let index = 0; index < 100; index++) {
    await first();
    await second();
  }
  const times: [number[], number[]] = [[], []];
  for (let index = 0; index < calls; index++) {
    for (const [slot, call] of [first, second].entries()) {
      const start = performance.now();
      await call();
      times[slot]?.push(performance.now() - start);
    }
  }
  return [median(times[0]), median(times[1])];
}

/** Wraps tools so the time spent inside them can be taken out of a turn's wall time. */
function timedTools(tools: readonly Tool[]): { tools: Tool[]; spent: () => number } {
  let spent = 0;
  return {
    tools: tools.map((tool) => ({
      ...tool,
      execute: async (args, context) => {
        const start = performance.now();
        try {
          return await tool.execute(args, context);
        } finally {
          spent += performance.now() - start;
        }
      },
    })),
    spent: () => spent,
  };
}

async function labCostPerRound(
  store: SqliteSessionStore,
  mode: ToolInvocationMode,
  tool: Tool,
  args: Record<string, unknown>,
): Promise<{ lab_ms: number; wall_ms: number }> {
  const timed = timedTools([tool]);
  const chat = new TimedModel(new OneCallModel(tool.name, args));
  const event = new TimedModel(new OneCallModel(tool.name, args));
  const labs: number[] = [];
  const walls: number[] = [];
  const providers = createLabProviders({ builtins: timed.tools });
  for (let turn = 0; turn < TURNS; turn++) {
    const before = chat.spent_ms + event.spent_ms + timed.spent();
    const start = performance.now();
    let rounds = 0;
    let calls = 0;
    for await (const turnEvent of runTurn({
      store,
      message: `call the tool ${turn}`,
      config: { tool_invocation_mode: mode, tools: [tool.name] },
      models: { chat, event },
      providers,
    })) {
      if (turnEvent.type === "round_end") rounds++;
      if (turnEvent.type === "tool_result" && turnEvent.ok) calls++;
    }
    if (calls !== 1) throw new Error(`tools bench: expected one successful ${tool.name} call`);
    const wall = performance.now() - start;
    const outside = chat.spent_ms + event.spent_ms + timed.spent() - before;
    if (turn < WARM_UP) continue;
    walls.push(wall / rounds);
    labs.push((wall - outside) / rounds);
  }
  return { lab_ms: median(labs), wall_ms: median(walls) };
}

function pathFigure(what: string, lab: number, direct: number, target: number): Figure {
  const ratio = lab / direct;
  return {
    name: `${what}: one call through the lab's tool path (validation, timeout, result mapping) against the direct call (median of ${CALLS})`,
    value: `${lab.toFixed(4)} ms`,
    baseline: `${direct.toFixed(4)} ms direct`,
    ratio,
    target: `<= ${target}x direct`,
    met: ratio <= target,
  };
}

function roundFigure(
  what: string,
  mode: ToolInvocationMode,
  cost: { lab_ms: number; wall_ms: number },
  direct: number,
): Figure {
  return {
    name: `lab cost per round with ${what}, ${mode} (instant model; model and tool time taken out; median of ${TURNS - WARM_UP} turns)`,
    value: `${cost.lab_ms.toFixed(3)} ms of the lab per round`,
    baseline: `${cost.wall_ms.toFixed(3)} ms per round in all (a direct tool call: ${direct.toFixed(3)} ms)`,
    ratio: cost.lab_ms / cost.wall_ms,
    target: "<= 1 ms per round",
    met: cost.lab_ms <= 1,
  };
}

export async function runToolsBench(): Promise<Figure[]> {
  const directory = mkdtempSync(join(tmpdir(), "agent-lab-bench-"));
  const store = new SqliteSessionStore(join(directory, "tools.sqlite3"));
  const entry = everythingEntry();
  const source = createMcpToolSource(
    "everything",
    McpServerDefinition.parse({ command: process.execPath, args: [entry, "stdio"] }),
  );
  const client = new Client({ name: "agent-lab-bench", version: "0.1.0" });
  try {
    console.log("\ntools benchmark");
    const figures: Figure[] = [];

    // In-process, declared style: a fixed result, as a declared mock answers.
    const declared: Tool = {
      name: "lookup",
      description: "a declared mock",
      parameters: { type: "object", properties: { query: { type: "string" } } },
      source: "declared",
      execute: async () => ({ answer: "42", source: "mock" }),
    };
    const inProcess = new ToolRegistry([declared]);
    const signal = new AbortController().signal;
    const [declaredDirect, declaredLab] = await timePair(
      () => declared.execute({ query: "q" }, { signal }),
      () => inProcess.run("lookup", { query: "q" }),
      CALLS,
    );
    const declaredFigure = pathFigure(
      "declared-style in-process tool",
      declaredLab,
      declaredDirect,
      1.2,
    );
    // Against a function that takes microseconds a ratio says little; the added time is the figure.
    declaredFigure.target = "<= 1.2x direct, or <= 0.02 ms added";
    declaredFigure.met = declaredFigure.ratio <= 1.2 || declaredLab - declaredDirect <= 0.02;
    figures.push(declaredFigure);

    // MCP over stdio: the lab's source against the SDK client on its own server.
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [entry, "stdio"],
        stderr: "ignore",
      }),
    );
    const mcpTools = await source.tools();
    const echo = mcpTools.find((tool) => tool.name === "everything__echo");
    if (echo === undefined) throw new Error("tools bench: server-everything offers no echo");
    const mcp = new ToolRegistry([echo]);
    const [echoDirect, echoLab] = await timePair(
      () => client.callTool({ name: "echo", arguments: { message: "bench" } }),
      () => mcp.run("everything__echo", { message: "bench" }),
      CALLS,
    );
    figures.push(pathFigure("MCP stdio tool (server-everything echo)", echoLab, echoDirect, 1.2));

    // Both modes' code paths warmed before anything is counted.
    for (const mode of MODES) await labCostPerRound(store, mode, declared, { query: "q" });
    for (const mode of MODES) {
      figures.push(
        roundFigure(
          "a declared-style tool",
          mode,
          await labCostPerRound(store, mode, declared, { query: "q" }),
          declaredDirect,
        ),
      );
      figures.push(
        roundFigure(
          "an MCP stdio tool",
          mode,
          await labCostPerRound(store, mode, echo, { message: "bench" }),
          echoDirect,
        ),
      );
    }
    printFigures("Tools", figures);
    return figures;
  } finally {
    await Promise.allSettled([client.close(), source.close()]);
    store.close();
    rmSync(directory, { recursive: true, force: true });
  }
}
