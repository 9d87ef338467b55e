import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { FakeOpenAIServer } from "../../../test/fake-openai-server.js";
import {
  EVERYTHING_ENTRY,
  FAULTY_ENTRY,
  type RunningHttpServer,
  startEverythingHttp,
  stdioDefinition,
} from "../../../test/mcp/reference-servers.js";
import {
  answerRound,
  fakeServerConfig,
  requestMessages,
  toolRound,
} from "../../../test/runtime/scripted-turns.js";
import {
  assertStrictEverywhere,
  completedTurn,
  MODES,
  openTemporaryStore,
  storedTurn,
  type TemporaryStore,
} from "../../../test/runtime/turn-harness.js";
import { McpServerDefinition } from "../../domain/tool-sources.js";
import { createMcpToolSource, type McpToolSource } from "./index.js";

/**
 * Whole turns, both modes, against the fake OpenAI server scripted to call MCP tools: the call
 * reaches the real reference server and its answer is what the session stores and sends back.
 */

let fake: FakeOpenAIServer;
let temporary: TemporaryStore;
let everything: McpToolSource;
let faulty: McpToolSource;
let http: RunningHttpServer;
let remote: McpToolSource;

beforeAll(async () => {
  everything = createMcpToolSource("everything", stdioDefinition(EVERYTHING_ENTRY, ["stdio"]));
  faulty = createMcpToolSource("faulty", stdioDefinition(FAULTY_ENTRY));
  http = await startEverythingHttp();
  remote = createMcpToolSource("remote", McpServerDefinition.parse({ url: http.url }));
});
afterAll(async () => {
  await Promise.all([everything.close(), faulty.close(), remote.close()]);
  await http.stop();
});
afterEach(async () => {
  await fake?.close();
  temporary?.dispose();
});

async function setUp(): Promise<void> {
  fake = await FakeOpenAIServer.start();
  temporary = openTemporaryStore();
}

async function turnCalling(
  mode: (typeof MODES)[number],
  source: McpToolSource,
  tool: string,
  args: Record<string, unknown>,
  limits: Record<string, number> = {},
) {
  await setUp();
  fake.enqueue(
    toolRound(mode, [{ id: "call_1", name: tool, arguments: JSON.stringify(args) }]),
    answerRound("Done."),
  );
  const tools = await source.tools();
  const end = await completedTurn({
    store: temporary.store,
    message: "use the tool",
    // These turns are about the MCP path: a tool that asks for approval (the faulty server's
    // tools declare no readOnlyHint) is let through by the session's override.
    config: fakeServerConfig(mode, fake, { tools: [tool], limits, approvals: { [tool]: false } }),
    tools,
  });
  const stored = storedTurn(temporary.store, end.session_id);
  const toolMessage = stored.messages.find((message) => message.role === "tool");
  return { end, stored, toolMessage };
}

describe.each(MODES)("MCP tools in a whole turn (%s)", (mode) => {
  it("stores server-everything's echo (stdio) and sends it back to the model", async () => {
    const { stored, toolMessage } = await turnCalling(mode, everything, "everything__echo", {
      message: "hello lab",
    });
    expect(toolMessage?.content).toBe(JSON.stringify("Echo: hello lab"));
    const execution = stored.calls.find((call) => call.call_kind === "tool_execution");
    expect(execution).toMatchObject({ event_name: "everything__echo" });
    const sentBack = requestMessages(fake, 1).map((message) => message.content);
    expect(sentBack.join("\n")).toContain("Echo: hello lab");
    assertStrictEverywhere(temporary.store, [], fake);
  });

  it("stores server-everything's echo over Streamable HTTP", async () => {
    const { toolMessage } = await turnCalling(mode, remote, "remote__echo", {
      message: "via http",
    });
    expect(toolMessage?.content).toBe(JSON.stringify("Echo: via http"));
  });

  it("a server that exits mid-call gives that call an error result; the turn completes", async () => {
    const { end, toolMessage } = await turnCalling(mode, faulty, "faulty__exit", {});
    expect(end.status).toBe("completed");
    expect(JSON.parse(toolMessage?.content ?? "{}").error).toMatch(
      /MCP server faulty, tool exit: the server closed the connection during the call/,
    );
    assertStrictEverywhere(temporary.store, [], fake);
  });

  it("a 10 MB tool result is cut to limits.max_tool_result_chars, and says so", async () => {
    const { toolMessage } = await turnCalling(
      mode,
      faulty,
      "faulty__big",
      { size: 10_000_000 },
      { max_tool_result_chars: 100_000 },
    );
    const content = toolMessage?.content ?? "";
    expect(content.length).toBeLessThan(100_200);
    expect(content).toMatch(/…\[cut: tool result over 100000 characters, \d+ more not stored\]$/);
  });
});
