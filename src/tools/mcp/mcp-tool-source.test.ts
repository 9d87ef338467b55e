import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  EVERYTHING_ENTRY,
  envReference,
  FAULTY_ENTRY,
  FILESYSTEM_ENTRY,
  processExists,
  startEverythingHttp,
  stdioDefinition,
} from "../../../test/mcp/reference-servers.js";
import { temporaryDirectory } from "../../../test/paths.js";
import { McpServerDefinition } from "../../domain/tool-sources.js";
import { ToolRegistry } from "../registry.js";
import type { Tool } from "../tool.js";
import { createMcpToolSource, type McpToolSource } from "./index.js";

const opened: McpToolSource[] = [];
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((source) => source.close()));
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function source(
  name: string,
  definition: McpServerDefinition,
  env?: Record<string, string>,
): McpToolSource {
  const created = createMcpToolSource(name, definition, env ? { env } : {});
  opened.push(created);
  return created;
}

const everything = () => source("everything", stdioDefinition(EVERYTHING_ENTRY, ["stdio"]));
const faulty = (extra: Record<string, unknown> = {}) =>
  source("faulty", stdioDefinition(FAULTY_ENTRY, [], extra));

function find(tools: readonly Tool[], name: string): Tool {
  const tool = tools.find((candidate) => candidate.name === name);
  if (tool === undefined) throw new Error(`no ${name} in ${tools.map((t) => t.name).join(", ")}`);
  return tool;
}

const call = (tool: Tool, args: Record<string, unknown> = {}) =>
  tool.execute(args, { signal: new AbortController().signal });

async function waitUntilGone(pid: number): Promise<boolean> {
  for (let attempt = 0; attempt < 100; attempt++) {
    if (!processExists(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

describe("MCP tool source: server-everything over stdio", () => {
  it("offers the server's tools as SERVER__TOOL with their schemas, descriptions, annotations and approval defaults", async () => {
    const tools = await everything().tools();
    const echo = find(tools, "everything__echo");
    expect(echo).toMatchObject({
      source: "mcp",
      description: "Echoes back the input string",
      requires_approval: false,
      annotations: { readOnlyHint: true, destructiveHint: false },
      parameters: { type: "object", properties: { message: { type: "string" } } },
    });
    // Not read-only: approval by default.
    expect(find(tools, "everything__toggle-simulated-logging").requires_approval).toBe(true);
    // Every name and schema is one the registry (and an endpoint) accepts.
    expect(() => new ToolRegistry(tools)).not.toThrow();
    expect(await call(echo, { message: "hello lab" })).toBe("Echo: hello lab");
  });

  it("keeps structured content, and summarizes an image without copying its bytes", async () => {
    const tools = await everything().tools();
    const weather = await call(find(tools, "everything__get-structured-content"), {
      location: "Chicago",
    });
    expect(weather).toMatchObject({
      structured_content: { temperature: 36, conditions: "Light rain / drizzle", humidity: 82 },
    });
    const image = (await call(find(tools, "everything__get-tiny-image"))) as Record<
      string,
      unknown
    >;
    expect(image.text).toContain("[image image/png, 4 KB]");
    expect(image.content).toEqual([
      expect.objectContaining({ type: "image", mime_type: "image/png", bytes: 4033 }),
    ]);
    expect(JSON.stringify(image)).not.toContain("iVBORw0KGgo");

    // Embedded resources: a text one is readable and goes in the message; a blob is summarized.
    const reference = find(tools, "everything__get-resource-reference");
    const text = (await call(reference, { resourceType: "Text", resourceId: 2 })) as Record<
      string,
      unknown
    >;
    expect(text.content).toEqual([
      expect.objectContaining({ type: "resource", uri: expect.stringContaining("text/2") }),
    ]);
    expect(text.text).toMatch(/\[resource demo:\/\/resource\/dynamic\/text\/2 text\/plain\]\n\S/);
    const blob = (await call(reference, { resourceType: "Blob", resourceId: 3 })) as Record<
      string,
      unknown
    >;
    expect(blob.content).toEqual([
      expect.objectContaining({
        type: "resource",
        bytes: expect.any(Number),
        sha256: expect.any(String),
      }),
    ]);
    expect(blob.text).toMatch(/\[resource demo:\/\/resource\/dynamic\/blob\/3 [^\]]+, \d+ B\]/);
  });

  it("starts lazily, reuses one server across calls, and leaves no child process after close()", async () => {
    const server = everything();
    expect(server.pid).toBeNull();
    const tools = await server.tools();
    const pid = server.pid as number;
    expect(processExists(pid)).toBe(true);
    await server.tools();
    await call(find(tools, "everything__echo"), { message: "again" });
    expect(server.pid).toBe(pid);
    await server.close();
    expect(await waitUntilGone(pid)).toBe(true);
    await expect(server.tools()).rejects.toThrow(/everything: the tool source is closed/);
    await expect(call(find(tools, "everything__echo"), { message: "x" })).rejects.toThrow(/closed/);
  });

  it("resolves env references at start, and refuses a literal secret or a missing variable", async () => {
    const server = source(
      "everything",
      stdioDefinition(EVERYTHING_ENTRY, ["stdio"], {
        env: {
          LAB_PROBE: envReference("LAB_PROBE_SOURCE"),
          LAB_SECRET: envReference("LAB_SECRET_SOURCE"),
          LAB_MODE: "plain",
        },
      }),
      { LAB_PROBE_SOURCE: "v-42", LAB_SECRET_SOURCE: "secret-value-123456" },
    );
    const env = await call(find(await server.tools(), "everything__get-env"));
    expect(env).toContain('"LAB_PROBE": "v-42"');
    expect(env).toContain('"LAB_MODE": "plain"');
    // A value the lab resolved as a secret, echoed by the server, is redacted before it is kept.
    expect(env).toContain('"LAB_SECRET": "[redacted]"');
    expect(env).not.toContain("secret-value-123456");

    const missing = source(
      "everything",
      stdioDefinition(EVERYTHING_ENTRY, ["stdio"], {
        env: { LAB_PROBE: envReference("LAB_UNSET_VAR") },
      }),
      {},
    );
    await expect(missing.tools()).rejects.toThrow(
      "MCP server everything: env.LAB_PROBE: the environment variable LAB_UNSET_VAR is not set",
    );
    expect(() =>
      createMcpToolSource(
        "everything",
        stdioDefinition(EVERYTHING_ENTRY, [], { env: { API_KEY: "sk-literal-secret" } }),
      ),
    ).toThrow(/MCP server everything: env\.API_KEY: secrets are never stored/);
  });
});

describe("MCP tool source: other transports and servers", () => {
  it("calls server-everything over Streamable HTTP", async () => {
    const running = await startEverythingHttp();
    cleanups.push(running.stop);
    const server = source(
      "remote",
      McpServerDefinition.parse({
        url: running.url,
        headers: { "X-Lab-Token": envReference("LAB_TOKEN") },
      }),
      { LAB_TOKEN: "token-value-456" },
    );
    const tools = await server.tools();
    expect(server.pid).toBeNull();
    expect(await call(find(tools, "remote__echo"), { message: "over http" })).toBe(
      "Echo: over http",
    );
    expect(await call(find(tools, "remote__get-sum"), { a: 2, b: 3 })).toContain("5");

    // The server goes away: the call fails clearly, and so does the next one, which reconnects.
    await running.stop();
    await expect(call(find(tools, "remote__echo"), { message: "gone" })).rejects.toThrow(
      /MCP server remote, tool echo: .*fetch failed.*; the next call starts it again/,
    );
    await expect(call(find(tools, "remote__echo"), { message: "gone" })).rejects.toThrow(
      /MCP server remote did not start: .*fetch failed/,
    );
  });

  it("reads and writes a temp folder through server-filesystem", async () => {
    const folder = temporaryDirectory();
    cleanups.push(folder.remove);
    writeFileSync(join(folder.path, "note.txt"), "written by the test");
    const tools = await source("fs", stdioDefinition(FILESYSTEM_ENTRY, [folder.path])).tools();
    const read = find(tools, "fs__read_text_file");
    const write = find(tools, "fs__write_file");
    expect(read.requires_approval).toBe(false);
    expect(write.requires_approval).toBe(true);
    expect(await call(read, { path: join(folder.path, "note.txt") })).toEqual({
      text: "written by the test",
      structured_content: { content: "written by the test" },
    });
    await call(write, { path: join(folder.path, "out.txt"), content: "from the lab" });
    expect(readFileSync(join(folder.path, "out.txt"), "utf8")).toBe("from the lab");
    await expect(call(read, { path: "/etc/hostname" })).rejects.toThrow(/denied|outside/i);
  });

  it("lets the definition override the approval default either way", async () => {
    const strict = await faulty({ requires_approval: true }).tools();
    expect(find(strict, "faulty__pid").requires_approval).toBe(true);
    const relaxed = await source(
      "relaxed",
      stdioDefinition(FAULTY_ENTRY, [], { requires_approval: false }),
    ).tools();
    expect(find(relaxed, "relaxed__delete").requires_approval).toBe(false);
    const defaults = await source("defaults", stdioDefinition(FAULTY_ENTRY)).tools();
    // readOnlyHint true but destructiveHint true: still approval.
    expect(find(defaults, "defaults__delete").requires_approval).toBe(true);
    expect(find(defaults, "defaults__pid").requires_approval).toBe(false);
  });
});

describe("MCP tool source: faults", () => {
  it("a server that exits mid-call fails that call only; the next call starts it again", async () => {
    const server = faulty();
    const tools = await server.tools();
    const registry = new ToolRegistry(tools);
    const firstPid = server.pid as number;
    const outcome = await registry.run("faulty__exit", {});
    expect(outcome).toMatchObject({ ok: false, kind: "failed" });
    expect(!outcome.ok && outcome.error).toMatch(
      /MCP server faulty, tool exit: the server closed the connection during the call; stderr: faulty server ready; the next call starts it again/,
    );
    expect(await waitUntilGone(firstPid)).toBe(true);
    const again = await registry.run("faulty__pid", {});
    expect(again.ok).toBe(true);
    const secondPid = Number(again.ok ? again.value : Number.NaN);
    expect(secondPid).not.toBe(firstPid);
    expect(server.pid).toBe(secondPid);
  });

  it("a call the server never answers times out; the server keeps serving other calls", async () => {
    const server = faulty({ timeout_ms: 1000 });
    const tools = await server.tools();
    const pid = server.pid;
    await expect(call(find(tools, "faulty__hang"))).rejects.toThrow(
      "MCP server faulty, tool hang: no answer within 1000 ms",
    );
    // Through the registry, as the kernel runs it: an error result, not a throw.
    const outcome = await new ToolRegistry(tools).run("faulty__hang", {});
    expect(outcome).toMatchObject({ ok: false, kind: "timeout" });
    // A cancelled turn abandons the call; the server is told, and is not restarted for it.
    const cancel = new AbortController();
    setTimeout(() => cancel.abort(new Error("cancelled")), 100);
    const cancelled = await new ToolRegistry(tools).run(
      "faulty__hang",
      {},
      { signal: cancel.signal },
    );
    expect(cancelled).toMatchObject({ ok: false, kind: "interrupted" });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await call(find(tools, "faulty__pid"))).toBe(String(pid));
    expect(server.pid).toBe(pid);
  });

  it("isError: true becomes an error result carrying the server's text", async () => {
    const outcome = await new ToolRegistry(await faulty().tools()).run("faulty__fails", {});
    expect(outcome).toMatchObject({ ok: false, kind: "failed", error: "the disk is on fire" });
  });

  it("repairs or refuses names and schemas a strict endpoint would reject, and says so", async () => {
    const server = faulty();
    const tools = await server.tools();
    const names = tools.map((tool) => tool.name);
    expect(names).toContain("faulty__weird_name_x");
    expect(names).not.toContain("faulty__string-schema");
    const long = names.find((name) => name.startsWith("faulty__lll")) as string;
    expect(long).toMatch(/^faulty__l+_[0-9a-f]{8}$/);
    expect(long.length).toBeLessThanOrEqual(64);
    expect(find(tools, "faulty__loose-schema").parameters).toEqual({
      description: "x",
      type: "object",
      properties: {},
    });
    expect(() => new ToolRegistry(tools)).not.toThrow();
    expect(server.notes()).toEqual(
      expect.arrayContaining([
        'MCP server faulty: tool "loose-schema": its input schema had no type: type "object" was added',
        'MCP server faulty: tool "weird.name/x" holds characters outside A-Z, a-z, 0-9, _ and -; offered as faulty__weird_name_x',
        `MCP server faulty: tool "string-schema" is not offered: its input schema's type is "string", not "object", so it cannot take named arguments`,
        expect.stringMatching(/tool "l{70}" is over 64 characters with its prefix; offered as/),
      ]),
    );
    // The renamed tool still reaches the server under its own name.
    expect(await call(find(tools, "faulty__weird_name_x"))).toBe("called weird.name/x");
  });

  it("a server that never answers the handshake fails the start within start_timeout_ms, leaving no child", async () => {
    const folder = temporaryDirectory();
    cleanups.push(folder.remove);
    const pidFile = join(folder.path, "pid");
    const silent = source(
      "silent",
      McpServerDefinition.parse({
        command: process.execPath,
        args: [
          "-e",
          "require('fs').writeFileSync(process.argv[1], String(process.pid)); setInterval(() => {}, 1000)",
          pidFile,
        ],
        // The call timeout stays at its 30 s default: the start has its own.
        start_timeout_ms: 300,
      }),
    );
    await expect(silent.tools()).rejects.toThrow(
      "MCP server silent did not start: no answer to the handshake within 300 ms (start_timeout_ms)",
    );
    expect(silent.pid).toBeNull();
    expect(await waitUntilGone(Number(readFileSync(pidFile, "utf8")))).toBe(true);
  });

  it("close() while the server is still starting fails the start and leaves no child", async () => {
    const folder = temporaryDirectory();
    cleanups.push(folder.remove);
    const pidFile = join(folder.path, "pid");
    const starting = source(
      "starting",
      McpServerDefinition.parse({
        command: process.execPath,
        args: [
          "-e",
          "require('fs').writeFileSync(process.argv[1], String(process.pid)); import(require('url').pathToFileURL(process.argv[2]).href)",
          pidFile,
          FAULTY_ENTRY,
        ],
      }),
    );
    const tools = starting.tools();
    await starting.close();
    await expect(tools).rejects.toThrow(/MCP server starting: the tool source is closed/);
    expect(starting.pid).toBeNull();
    expect(await waitUntilGone(Number(readFileSync(pidFile, "utf8")))).toBe(true);
  });

  it("refuses a server that cannot start, and a name too long to prefix tools, naming them", async () => {
    const broken = source("broken", McpServerDefinition.parse({ command: "/nonexistent/server" }));
    await expect(broken.tools()).rejects.toThrow(/MCP server broken did not start/);
    expect(() => createMcpToolSource("s".repeat(60), stdioDefinition(FAULTY_ENTRY))).toThrow(
      /too long to prefix tool names/,
    );
    expect(() => createMcpToolSource("a__b", stdioDefinition(FAULTY_ENTRY))).toThrow(
      /MCP server name/,
    );
  });
});
