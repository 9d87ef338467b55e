import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LabSessionConfig } from "../domain/session-config.js";
import type { Tool } from "../tools/tool.js";
import type { ToolSource } from "../tools/tool-source.js";
import { findLabConfig, labToolSources, parseLabConfig } from "./lab-config.js";
import { createToolProvider } from "./tool-provider.js";

describe("the lab config file (agent-lab.yaml)", () => {
  it("reads MCP servers and HTTP tools", () => {
    const config = parseLabConfig(
      [
        "mcp_servers:",
        "  files:",
        "    command: npx",
        "    args: [server-filesystem, /tmp]",
        "http_tools:",
        "  - name: weather",
        "    url: http://127.0.0.1:9/weather",
        "    headers: { authorization: 'Bearer $" + "{WEATHER_TOKEN}' }",
      ].join("\n"),
      "agent-lab.yaml",
    );
    expect(config.mcp_servers.files).toMatchObject({ command: "npx", timeout_ms: 30_000 });
    expect(config.http_tools[0]).toMatchObject({ name: "weather", timeout_ms: 30_000 });
  });

  it("names file:line:col and the field of each problem", () => {
    const text = [
      "mcp_servers:",
      "  files:",
      "    comand: npx",
      "http_tools:",
      "  - name: weather",
      "    url: 42",
    ].join("\n");
    expect(() => parseLabConfig(text, "lab/agent-lab.yaml")).toThrow(
      /lab\/agent-lab\.yaml:3:5: mcp_servers\.files\.comand: unknown key "comand"/,
    );
    expect(() => parseLabConfig(text, "lab/agent-lab.yaml")).toThrow(
      /lab\/agent-lab\.yaml:6:10: http_tools\.0\.url: /,
    );
    expect(() => parseLabConfig("mcp_servers: [", "x.yaml")).toThrow(/x\.yaml:1:\d+: YAML syntax/);
    expect(() => parseLabConfig("", "x.yaml")).toThrow(/x\.yaml:1:1: the file is empty/);
  });

  it("reads the gateway's upstreams and refuses a bad one at file:line:col", () => {
    const good = parseLabConfig(
      [
        "upstreams:",
        "  local:",
        "    base_url: http://127.0.0.1:11434/v1",
        "    model: qwen3:8b",
        "    event_model: sim",
      ].join("\n"),
      "agent-lab.yaml",
    );
    expect(good.upstreams.local).toEqual({
      base_url: "http://127.0.0.1:11434/v1",
      model: "qwen3:8b",
      event_model: "sim",
      pass_client_key: false,
      capture: "auto",
      mode: "chat_agent_tools",
      options: {},
    });
    const refused = (lines: string[]) => () =>
      parseLabConfig(lines.join("\n"), "lab/agent-lab.yaml");
    // A key written into the file instead of the name of its variable.
    expect(
      refused([
        "upstreams:",
        "  paid:",
        "    base_url: https://api.example.com/v1",
        "    model: big",
        "    api_key: sk-abcdefghijklmnopqrstuvwxyz",
      ]),
    ).toThrow(/lab\/agent-lab\.yaml:5:5: upstreams\.paid\.api_key: unknown key "api_key"/);
    expect(
      refused([
        "upstreams:",
        "  paid:",
        "    base_url: https://api.example.com/v1",
        "    model: big",
        "    api_key_env: sk-abcdefghijklmnopqrstuvwxyz",
      ]),
    ).toThrow(
      /lab\/agent-lab\.yaml:5:18: upstreams\.paid\.api_key_env: must be an environment variable name/,
    );
    expect(refused(["upstreams:", "  local:", "    base_url: not a url", "    model: m"])).toThrow(
      /lab\/agent-lab\.yaml:3:15: upstreams\.local\.base_url: /,
    );
    expect(
      refused(["upstreams:", "  sim:", "    base_url: http://127.0.0.1:1/v1", "    model: m"]),
    ).toThrow(/lab\/agent-lab\.yaml:2:3: upstreams\.sim: .*sim is the simulated model's name/);
    expect(
      refused(["upstreams:", "  a:b:", "    base_url: http://127.0.0.1:1/v1", "    model: m"]),
    ).toThrow(/lab\/agent-lab\.yaml:2:3: upstreams\.a:b: .*letters, digits/);
    // event_model names another upstream or a model string.
    const eventModel = (value: string) =>
      refused([
        "upstreams:",
        "  local:",
        "    base_url: http://127.0.0.1:1/v1",
        "    model: m",
        `    event_model: ${value}`,
        "  small:",
        "    base_url: http://127.0.0.1:2/v1",
        "    model: s",
      ]);
    expect(eventModel("smal")).toThrow(
      /lab\/agent-lab\.yaml:5:18: upstreams\.local\.event_model: "smal" is neither an upstream's name nor a model string/,
    );
    for (const value of ["small", "sim", "openai:gpt-4.1-mini", "local"]) {
      expect(eventModel(value), value).not.toThrow();
    }
  });

  it("creates no source until one is asked for its tools", async () => {
    const sources = labToolSources(
      parseLabConfig("mcp_servers:\n  a:\n    command: nope\n", "agent-lab.yaml"),
    );
    expect(sources.map((entry) => [entry.prefix, entry.source.name])).toEqual([["a", "mcp:a"]]);
    // A server name too long to prefix tools is refused when the source is created: building the
    // list must not create it, so only a session selecting that server fails.
    const long = "s".repeat(60);
    const [unused] = labToolSources(
      parseLabConfig(`mcp_servers:\n  ${long}:\n    command: nope\n`, "agent-lab.yaml"),
    );
    await expect(unused?.source.tools()).rejects.toThrow(/too long to prefix tool names/);
  });

  describe("where it is found", () => {
    let folder: string;
    beforeEach(() => {
      folder = mkdtempSync(join(tmpdir(), "lab-config-"));
    });
    afterEach(() => rmSync(folder, { recursive: true, force: true }));

    it("--lab-config, else $AGENT_LAB_CONFIG, else agent-lab.yaml beside the database", () => {
      const database_path = join(folder, "lab.sqlite3");
      expect(findLabConfig({ env: {}, database_path })).toBeNull();
      writeFileSync(join(folder, "agent-lab.yaml"), "http_tools: []\n");
      expect(findLabConfig({ env: {}, database_path })).toBe(join(folder, "agent-lab.yaml"));
      expect(findLabConfig({ env: { AGENT_LAB_CONFIG: "/e.yaml" }, database_path })).toBe(
        "/e.yaml",
      );
      expect(
        findLabConfig({ flag: "/f.yaml", env: { AGENT_LAB_CONFIG: "/e.yaml" }, database_path }),
      ).toBe("/f.yaml");
    });
  });
});

/** A source standing in for an MCP server: counts starts and closes. */
function fakeSource(name: string, toolNames: string[]) {
  const state = { started: 0, closed: 0 };
  const tools: Tool[] = toolNames.map((tool) => ({
    name: tool,
    description: `${tool} of ${name}`,
    parameters: { type: "object", properties: {} },
    source: "mcp",
    execute: async () => tool,
  }));
  const source: ToolSource = {
    name: `mcp:${name}`,
    async tools() {
      state.started++;
      return tools;
    },
    async close() {
      state.closed++;
    },
  };
  return { source, state };
}

describe("the lab's tool provider", () => {
  const config = (input: object) => LabSessionConfig.parse(input);

  it("selects SERVER__TOOL, SERVER__* selects a server's every tool, and unselected servers never start", async () => {
    const docs = fakeSource("docs", ["docs__search", "docs__read"]);
    const shell = fakeSource("shell", ["shell__run"]);
    const provider = createToolProvider({
      sources: [
        { prefix: "docs", source: docs.source },
        { prefix: "shell", source: shell.source },
      ],
    });
    expect((await provider.toolsFor(config({}))).names()).toEqual(["mock_search", "mock_ticket"]);
    expect(docs.state.started).toBe(0);

    const one = await provider.toolsFor(config({ tools: ["docs__read"] }));
    expect(one.names()).toEqual(["docs__read"]);
    const all = await provider.toolsFor(config({ tools: ["mock_search", "docs__*"] }));
    expect(all.names()).toEqual(["mock_search", "docs__search", "docs__read"]);
    expect(shell.state.started).toBe(0);

    await expect(provider.toolsFor(config({ tools: ["docs__write"] }))).rejects.toThrow(
      /unknown tool docs__write; available: .*docs__search/,
    );
    await expect(provider.toolsFor(config({ tools: ["nobody__*"] }))).rejects.toThrow(
      /nobody__\* selects nothing/,
    );
    await provider.close();
    expect(docs.state.closed).toBe(1);
  });

  it("refuses a declared tool named like a server's tool", async () => {
    const docs = fakeSource("docs", ["docs__search"]);
    const provider = createToolProvider({ sources: [{ prefix: "docs", source: docs.source }] });
    await expect(
      provider.toolsFor(
        config({
          tools: ["docs__search"],
          declared_tools: [{ name: "docs__search", mock: { result: 1 } }],
        }),
      ),
    ).rejects.toThrow(/declared tool docs__search has the name of a mcp tool/);
  });

  it("serves a frozen config its registry again, and reads a config that can change anew", async () => {
    const provider = createToolProvider();
    const selection = Object.freeze(["mock_search"]);
    const frozen = countingReads(config({ tools: ["mock_search"] }), selection);
    const first = await provider.toolsFor(frozen.config);
    expect(first.names()).toEqual(["mock_search"]);
    const readsForFirst = frozen.reads();
    expect(readsForFirst).toBeGreaterThan(0);
    // Served by the config itself: its selection is not even read again.
    expect(await provider.toolsFor(frozen.config)).toBe(first);
    expect(frozen.reads()).toBe(readsForFirst);
    // Another frozen config with the same selection (a session's config parsed anew) gets the
    // same registry, and from then on by itself as well.
    const other = countingReads(config({ tools: ["mock_search"] }), selection);
    expect(await provider.toolsFor(other.config)).toBe(first);
    const otherReadsForFirst = other.reads();
    expect(await provider.toolsFor(other.config)).toBe(first);
    expect(other.reads()).toBe(otherReadsForFirst);
    // The same selection in a config that may be changed: what it names when asked is what counts.
    const open = config({ tools: ["mock_search"] });
    expect((await provider.toolsFor(open)).names()).toEqual(["mock_search"]);
    open.tools = ["mock_ticket"];
    expect((await provider.toolsFor(open)).names()).toEqual(["mock_ticket"]);
    open.tools.push("mock_search");
    expect((await provider.toolsFor(open)).names()).toEqual(["mock_ticket", "mock_search"]);
  });

  it("lists every tool with its source, schema and approval", async () => {
    const docs = fakeSource("docs", ["docs__search"]);
    const listed = await createToolProvider({
      sources: [{ prefix: "docs", source: docs.source }],
    }).list();
    expect(listed.map((tool) => [tool.name, tool.source])).toEqual([
      ["mock_search", "builtin"],
      ["mock_ticket", "builtin"],
      ["docs__search", "mcp"],
    ]);
    expect(listed[0]?.parameters).toMatchObject({ type: "object" });
    expect(listed.every((tool) => typeof tool.requires_approval === "boolean")).toBe(true);
  });
});

/** `config`, frozen, with `tools` given by a getter that counts how often it is read. */
function countingReads(config: LabSessionConfig, tools: readonly string[]) {
  let reads = 0;
  const counted = { ...config };
  Object.defineProperty(counted, "tools", {
    enumerable: true,
    get: () => {
      reads++;
      return tools;
    },
  });
  return { config: Object.freeze(counted) as LabSessionConfig, reads: () => reads };
}
