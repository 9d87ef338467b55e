import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { closedLoopbackPort } from "../../test/closed-port.js";
import { OtlpReceiver, type ReceivedSpan } from "../../test/otlp-receiver.js";
import { freshLab, runCli, startCli } from "../cli/test-fixtures.js";
import type { TurnRecord } from "../domain/records.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import {
  completionStream,
  errorReply,
  FakeOpenAIServer,
  streamReply,
} from "../testing/fake-openai-server.js";
import { DEFAULT_EXPORT_TIMEOUT_MS } from "./telemetry-config.js";

/**
 * OpenTelemetry export through the CLI, as users run it, into a local OTLP/HTTP receiver that
 * decodes what arrives: live export of `run`, `export-otel` of a past session, a collector that
 * is down, and no export at all when the variable is unset.
 */

const lab = freshLab();
let receiver: OtlpReceiver;
beforeEach(async () => {
  receiver = await OtlpReceiver.start();
});
afterEach(() => receiver.close());

const exporting = () => ({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });

function byName(spans: readonly ReceivedSpan[], prefix: string): ReceivedSpan[] {
  return spans.filter((span) => span.name.startsWith(prefix));
}

function one(spans: readonly ReceivedSpan[], prefix: string): ReceivedSpan {
  const found = byName(spans, prefix);
  expect(found.map((span) => span.name)).toHaveLength(1);
  return found[0] as ReceivedSpan;
}

async function run(args: readonly string[], env: Record<string, string | undefined> = {}) {
  const result = await runCli(["--db", lab.db, "run", ...args], env);
  expect(result.status, result.stderr).toBe(0);
  return result;
}

/** What the store recorded (read through its API, then closed). */
function recorded(sessionId?: string) {
  const store = new SqliteSessionStore(lab.db);
  try {
    const id = sessionId ?? (store.listSessions()[0]?.id as string);
    return { id, turns: store.listTurns(id), usage: store.usageSummary(id) };
  } finally {
    store.close();
  }
}

describe("live export of a run", () => {
  it("sends a chat_agent_tools turn as invoke_agent with chat and execute_tool children, at the recorded times, without contents", async () => {
    await run(["--mode", "chat_agent_tools", "search for sqlite wal mode"], exporting());
    const spans = receiver.spans;
    const root = one(spans, "invoke_agent");
    expect(root.parent_span_id).toBe("");
    expect(root.resource["service.name"]).toBe("agent-lab");
    const { id: session, turns, usage } = recorded();
    expect(root.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.conversation.id": session,
      "agent_lab.mode": "chat_agent_tools",
      "agent_lab.turn_index": 1,
      "agent_lab.status": "completed",
    });
    const chats = byName(spans, "chat ");
    const tool = one(spans, "execute_tool mock_search");
    expect(chats.length).toBeGreaterThanOrEqual(2);
    for (const span of [...chats, tool]) {
      expect(span.parent_span_id).toBe(root.span_id);
      expect(span.trace_id).toBe(root.trace_id);
      expect(span.start_ms).toBeGreaterThanOrEqual(root.start_ms);
      expect(span.end_ms).toBeLessThanOrEqual(root.end_ms + 1);
    }
    const first = usage.calls.find((call) => call.metric_key === "chat:1:1");
    const chat = chats.find((span) => span.attributes["agent_lab.metric_key"] === "chat:1:1");
    expect(chat?.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "sim",
      "gen_ai.usage.input_tokens": first?.prompt_tokens,
      "gen_ai.usage.output_tokens": first?.completion_tokens,
      "agent_lab.cached_tokens": first?.cached_tokens,
      "agent_lab.round_index": 1,
      "agent_lab.agent": "chat_agent",
      "agent_lab.fallback": false,
      "gen_ai.response.finish_reasons": ["tool_calls"],
    });
    expect(chat?.attributes["gen_ai.request.model"]).toBeTypeOf("string");
    expect((chat?.end_ms ?? 0) - (chat?.start_ms ?? 0)).toBeCloseTo(first?.elapsed_ms ?? -1, 0);
    expect(tool.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "mock_search",
      "agent_lab.metric_key": expect.stringMatching(/^tool:1:1:/),
    });
    expect(tool.attributes["gen_ai.tool.call.id"]).toBe(
      String(tool.attributes["agent_lab.metric_key"]).split(":")[3],
    );
    // The turn's span is the turn's recorded wall clock, not the export's.
    const turn = turns[0] as TurnRecord;
    expect(root.start_ms).toBeCloseTo(Date.parse(turn.started_at), 0);
    expect(root.end_ms).toBeCloseTo(Date.parse(turn.completed_at ?? ""), 0);
    for (const span of spans) {
      const contentKeys = Object.keys(span.attributes).filter(
        (key) => key.includes("messages") || key.includes("instructions"),
      );
      expect(contentKeys).toEqual([]);
      expect(span.attributes["gen_ai.tool.call.arguments"]).toBeUndefined();
    }
  });

  it("marks a dual_agent argument fallback, and sends contents only with the capture variable", async () => {
    const config = join(lab.folder, "config.json");
    writeFileSync(
      config,
      JSON.stringify({
        tool_invocation_mode: "dual_agent",
        chat_agent: { model: "sim", options: { malformed_arguments_rate: 1 } },
        event_agent: { model: "sim" },
      }),
    );
    await run(["--config", config, "search for sqlite wal mode"], {
      ...exporting(),
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true",
    });
    const spans = receiver.spans;
    const root = one(spans, "invoke_agent");
    expect(root.attributes["agent_lab.mode"]).toBe("dual_agent");
    const fallback = byName(spans, "chat ").find(
      (span) => span.attributes["agent_lab.call_kind"] === "argument_fallback",
    );
    expect(fallback?.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "agent_lab.fallback": true,
      "agent_lab.agent": "event_agent",
      "gen_ai.tool.name": "mock_search",
      "agent_lab.metric_key": expect.stringMatching(/^fallback:1:1:/),
    });
    expect(fallback?.parent_span_id).toBe(root.span_id);
    const tool = one(spans, "execute_tool mock_search");
    expect(tool.attributes["agent_lab.fallback"]).toBe(true);
    // The tool ran on the repaired arguments, after the fallback that wrote them.
    expect(tool.start_ms).toBeGreaterThanOrEqual(fallback?.end_ms ?? Number.POSITIVE_INFINITY);
    const input = JSON.parse(String(root.attributes["gen_ai.input.messages"]));
    expect(input).toEqual([
      { role: "user", parts: [{ type: "text", content: "search for sqlite wal mode" }] },
    ]);
    const chat = byName(spans, "chat ").find(
      (span) => span.attributes["agent_lab.metric_key"] === "chat:1:1",
    );
    const system = JSON.parse(String(chat?.attributes["gen_ai.system_instructions"]));
    expect(system[0].content).toContain("mock_search");
    const output = JSON.parse(String(chat?.attributes["gen_ai.output.messages"]));
    expect(output[0].role).toBe("assistant");
    expect(output[0].parts.some((part: { type: string }) => part.type === "tool_call")).toBe(true);
    expect(JSON.parse(String(tool.attributes["gen_ai.tool.call.arguments"]))).toHaveProperty(
      "query",
    );
    expect(tool.attributes["gen_ai.tool.call.result"]).toBeTypeOf("string");
  });

  it("gives a failed call and its turn error.type, with the endpoint's identity on the call that worked, and no key anywhere", async () => {
    const endpoint = await FakeOpenAIServer.start();
    try {
      const key = "sk-otel-test-0123456789abcdef0123456789";
      const config = join(lab.folder, "config.json");
      writeFileSync(
        config,
        JSON.stringify({
          tool_invocation_mode: "chat_agent_tools",
          chat_agent: {
            model: "openai:gpt-test",
            base_url: endpoint.baseUrl,
            api_key_env: "OPENAI_API_KEY",
            options: { max_retries: 0 },
          },
        }),
      );
      endpoint.enqueue(
        streamReply(completionStream({ text: ["Hello"] })),
        errorReply(400, `bad request for ${key}`),
      );
      const env = {
        ...exporting(),
        OPENAI_API_KEY: key,
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true",
      };
      await run(["--config", config, "--session", "s-fail", "--new", "hi"], env);
      const failed = await runCli(["--db", lab.db, "run", "--session", "s-fail", "again"], env);
      expect(failed.status).not.toBe(0);
      const roots = byName(receiver.spans, "invoke_agent").sort(
        (a, b) =>
          Number(a.attributes["agent_lab.turn_index"]) -
          Number(b.attributes["agent_lab.turn_index"]),
      );
      expect(roots).toHaveLength(2);
      const [ok, bad] = roots as [ReceivedSpan, ReceivedSpan];
      const okChat = receiver.spans.find((span) => span.parent_span_id === ok.span_id);
      const { usage } = recorded("s-fail");
      expect(okChat?.attributes).toMatchObject({
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-test",
        "gen_ai.response.id": usage.calls[0]?.response_id,
        "gen_ai.response.model": usage.calls[0]?.response_model,
      });
      expect(ok.attributes["error.type"]).toBeUndefined();
      expect(bad.attributes["agent_lab.status"]).toBe("failed");
      expect(bad.status_code).toBe(2);
      const badChat = receiver.spans.find((span) => span.parent_span_id === bad.span_id);
      expect(badChat?.name).toBe("chat gpt-test");
      expect(badChat?.status_code).toBe(2);
      expect(badChat?.attributes["error.type"]).toBeTypeOf("string");
      expect(bad.attributes["error.type"]).toBe(badChat?.attributes["error.type"]);
      expect(JSON.stringify(receiver.spans)).not.toContain(key);
      expect(JSON.stringify(receiver.headers)).not.toContain(key);
    } finally {
      await endpoint.close();
    }
  });
});

describe("live export of the server", () => {
  it("exports a turn run over the HTTP API, flushed when the server stops", async () => {
    const server = startCli(
      ["--db", lab.db, "serve", "--port", "0", "--token", "t0ken-t0ken-t0ken"],
      {
        ...exporting(),
        // Longer than the test: only the shutdown's flush can send the spans.
        OTEL_BSP_SCHEDULE_DELAY: "600000",
      },
    );
    const printed = await server.stdoutMatches(
      (text) => /running at (http:\/\/127\.0\.0\.1:\d+)/.test(text),
      "the address",
    );
    const base = /running at (http:\/\/127\.0\.0\.1:\d+)/.exec(printed)?.[1] as string;
    const headers = {
      authorization: "Bearer t0ken-t0ken-t0ken",
      "content-type": "application/json",
    };
    const created = await fetch(`${base}/api/sessions`, {
      method: "POST",
      headers,
      body: JSON.stringify({ title: "api", config: { tool_invocation_mode: "chat_agent_tools" } }),
    });
    const { session } = (await created.json()) as { session: { id: string } };
    const turn = await fetch(`${base}/api/sessions/${session.id}/turns`, {
      method: "POST",
      headers,
      body: JSON.stringify({ message: "search for sqlite wal mode" }),
    });
    expect(await turn.text()).toMatch(/event: turn_end/);
    expect(receiver.spans).toEqual([]);
    server.child.kill("SIGTERM");
    const result = await server.result;
    expect(result.status, result.stderr).toBe(0);
    const root = one(receiver.spans, "invoke_agent");
    expect(root.attributes["gen_ai.conversation.id"]).toBe(session.id);
    expect(one(receiver.spans, "execute_tool mock_search").parent_span_id).toBe(root.span_id);
  });
});

describe("agent-lab export-otel", () => {
  it("sends a past session's turns as the live export sent them, and says how many went where", async () => {
    await run(
      ["--mode", "chat_agent_tools", "--session", "past", "--new", "search for wal"],
      exporting(),
    );
    await run(["--session", "past", "search for flaky tests"], exporting());
    const live = receiver.spans.map(comparable).sort(order);
    expect(live.filter((span) => span.name.startsWith("invoke_agent"))).toHaveLength(2);
    const later = await OtlpReceiver.start();
    try {
      const result = await runCli(["--db", lab.db, "export-otel", "past"], {
        OTEL_EXPORTER_OTLP_ENDPOINT: later.url,
        OTEL_EXPORTER_OTLP_HEADERS: "Authorization=Basic c2VjcmV0OnNlY3JldA==",
        OTEL_SERVICE_NAME: "lab-export",
        // A sampler set for the live export does not thin out a session asked for by name (it
        // made the export read as failed, exit 1, the collector blamed).
        OTEL_TRACES_SAMPLER: "always_off",
      });
      expect(result.status, result.stderr).toBe(0);
      expect(result.stdout).toBe(
        `sent ${live.length} spans (2 turns of session past) to ${later.url}/v1/traces\n`,
      );
      expect(result.stdout + result.stderr).not.toContain("c2VjcmV0");
      expect(later.headers[0]?.authorization).toBe("Basic c2VjcmV0OnNlY3JldA==");
      expect(later.spans[0]?.resource["service.name"]).toBe("lab-export");
      expect(later.spans.map(comparable).sort(order)).toEqual(live);
    } finally {
      await later.close();
    }
  });

  it("refuses without a collector, fails (exit 1) when it is down, and names an unknown session", async () => {
    await run(["--session", "known", "--new", "hello"]);
    const unset = await runCli(["--db", lab.db, "export-otel", "known"]);
    expect(unset.status).toBe(1);
    expect(unset.stderr).toMatch(/set OTEL_EXPORTER_OTLP_ENDPOINT/);
    const port = await closedLoopbackPort();
    const down = await runCli(["--db", lab.db, "export-otel", "known"], {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://127.0.0.1:${port}/v1/traces?api_key=secret-in-query`,
      OTEL_EXPORTER_OTLP_TIMEOUT: "500",
    });
    expect(down.status).toBe(1);
    expect(down.stderr).toMatch(
      new RegExp(
        `^agent-lab: export-otel: 0 of 2 spans \\(1 turn\\) reached http://127\\.0\\.0\\.1:${port}/v1/traces; the rest failed: `,
      ),
    );
    expect(down.stderr).not.toContain("secret-in-query");
    const unknown = await runCli(["--db", lab.db, "export-otel", "nope-nope"], exporting());
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/session not found: nope-nope/);
    // Said once, as export-otel's error (the live export's warning said it first, too).
    const notUrl = await runCli(["--db", lab.db, "export-otel", "known"], {
      OTEL_EXPORTER_OTLP_ENDPOINT: "not-a-url",
    });
    expect(notUrl.status).toBe(1);
    expect(notUrl.stderr).toBe(
      "agent-lab: OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is not a URL; set it to the collector's, such as http://127.0.0.1:4318\n",
    );
    expect(receiver.spans).toEqual([]);
  });
});

describe("a collector that is down", () => {
  it("leaves the turn alone, costs one warning line, and does not hold the exit past the timeout", async () => {
    const port = await closedLoopbackPort();
    const cli = startCli(["--db", lab.db, "run", "--json", "search for sqlite wal mode"], {
      // No OTEL_EXPORTER_OTLP_TIMEOUT: the lab's 3 s default, not the SDK's 10 s of retries.
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://user:pw@127.0.0.1:${port}`,
    });
    // The answer is printed when the turn is over; what follows is the export's flush and exit.
    await cli.stdoutMatches((text) => text.trimEnd().endsWith("}"), "the JSON answer");
    const answered = performance.now();
    const result = await cli.result;
    const exitDelay = performance.now() - answered;
    expect(result.status, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: "completed" });
    const warnings = result.stderr.split("\n").filter((line) => line.includes("OpenTelemetry"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      new RegExp(
        `^agent-lab: warning: OpenTelemetry export to http://127\\.0\\.0\\.1:${port}/v1/traces failed`,
      ),
    );
    expect(result.stderr).not.toContain("pw@");
    // The 3 s timeout, plus this busy machine's slack; the SDK's default would retry for 10 s.
    expect(exitDelay).toBeLessThan(DEFAULT_EXPORT_TIMEOUT_MS + 1_500);
    const { usage } = recorded();
    expect(usage.calls.length).toBeGreaterThan(0);
  });

  it("turns export off with one warning when the endpoint is not a URL (the SDK would send to its default)", async () => {
    for (const endpoint of ["not-a-url", "http://"]) {
      const result = await runCli(["--db", lab.db, "run", "--json", "hello there"], {
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      });
      expect(result.status, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ status: "completed" });
      const warnings = result.stderr.split("\n").filter((line) => line.includes("OpenTelemetry"));
      expect(warnings, endpoint).toEqual([
        "agent-lab: warning: OpenTelemetry export is off: OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is not a URL; set it to the collector's, such as http://127.0.0.1:4318",
      ]);
    }
  });

  it("turns export off with one warning when the base endpoint has a query string (the SDK would append the path after it), and never prints the query", async () => {
    const result = await runCli(["--db", lab.db, "run", "--json", "hello there"], {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318/?api_key=sekrit-123",
    });
    expect(result.status, result.stderr).toBe(0);
    const warnings = result.stderr.split("\n").filter((line) => line.includes("OpenTelemetry"));
    expect(warnings).toEqual([
      expect.stringMatching(
        /^agent-lab: warning: OpenTelemetry export is off: OTEL_EXPORTER_OTLP_ENDPOINT has a query string/,
      ),
    ]);
    expect(result.stderr).not.toContain("sekrit-123");
  });
});

describe("the standard variables beside the endpoint", () => {
  const runWith = async (env: Record<string, string>) => {
    const result = await runCli(["--db", lab.db, "run", "--json", "search for otlp"], {
      ...exporting(),
      ...env,
    });
    expect(result.status, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: "completed" });
    return result.stderr.split("\n").filter((line) => line.includes("OpenTelemetry"));
  };

  it("OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn export off, without a word", async () => {
    expect(await runWith({ OTEL_SDK_DISABLED: "true" })).toEqual([]);
    expect(await runWith({ OTEL_TRACES_EXPORTER: "none" })).toEqual([]);
    expect(receiver.spans).toEqual([]);
    expect(receiver.protobuf).toEqual([]);
    const refused = await runCli(["--db", lab.db, "export-otel", recorded().id], {
      ...exporting(),
      OTEL_SDK_DISABLED: "TRUE",
    });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/export-otel sends nothing: OTEL_SDK_DISABLED is true/);
    // Any other value is no such word: export goes on.
    expect(await runWith({ OTEL_SDK_DISABLED: "false", OTEL_TRACES_EXPORTER: "otlp" })).toEqual([]);
    expect(byName(receiver.spans, "invoke_agent")).toHaveLength(1);
  });

  it("an exporter or a protocol the lab does not have turns export off with one warning naming it", async () => {
    expect(await runWith({ OTEL_TRACES_EXPORTER: "console" })).toEqual([
      "agent-lab: warning: OpenTelemetry export is off: OTEL_TRACES_EXPORTER names console, and the lab exports over OTLP only (otlp)",
    ]);
    expect(await runWith({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).toEqual([
      "agent-lab: warning: OpenTelemetry export is off: the OTLP protocol is grpc, and the lab sends OTLP over HTTP only (http/protobuf or http/json)",
    ]);
    expect(receiver.spans).toEqual([]);
    expect(receiver.protobuf).toEqual([]);
  });

  it("OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf sends OTLP's protobuf encoding; http/json the JSON one", async () => {
    expect(await runWith({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf" })).toEqual([]);
    expect(receiver.spans).toEqual([]);
    const body = Buffer.concat(receiver.protobuf).toString("latin1");
    for (const text of ["invoke_agent", "execute_tool mock_search", "gen_ai.operation.name"]) {
      expect(body).toContain(text);
    }
    expect(
      await runWith({
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
      }),
    ).toEqual([]);
    expect(byName(receiver.spans, "invoke_agent")).toHaveLength(1);
  });
});

describe("without OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  it("exports nothing and never loads the SDK; with it, the SDK is loaded", async () => {
    const probe = (env: Record<string, string | undefined>) =>
      runCli(["--db", lab.db, "run", "hello"], { ...env, NODE_OPTIONS: `--import ${loadProbe()}` });
    const off = await probe({ OTEL_EXPORTER_OTLP_HEADERS: "x=y", OTEL_SERVICE_NAME: "lab" });
    expect(off.status, off.stderr).toBe(0);
    expect(off.stderr).toContain("otel-loaded: false");
    expect(receiver.spans).toEqual([]);
    const on = await probe(exporting());
    expect(on.stderr).toContain("otel-loaded: true");
    expect(byName(receiver.spans, "invoke_agent")).toHaveLength(1);
  });
});

/** A preload that reports, at exit, whether any @opentelemetry module was loaded. */
function loadProbe(): string {
  const path = join(lab.folder, "probe.mjs");
  writeFileSync(
    path,
    [
      'import { createRequire } from "node:module";',
      "const require = createRequire(import.meta.url);",
      'process.on("exit", () => {',
      '  const loaded = Object.keys(require.cache).some((key) => key.includes("@opentelemetry"));',
      '  process.stderr.write("otel-loaded: " + loaded + "\\n");',
      "});",
    ].join("\n"),
  );
  return path;
}

/** A span without its ids, which differ between two exports of the same turns. */
function comparable(span: ReceivedSpan) {
  return {
    name: span.name,
    kind: span.kind,
    root: span.parent_span_id === "",
    start_ms: span.start_ms,
    end_ms: span.end_ms,
    attributes: span.attributes,
    status_code: span.status_code,
  };
}

function order(a: ReturnType<typeof comparable>, b: ReturnType<typeof comparable>): number {
  return (
    a.start_ms - b.start_ms ||
    a.name.localeCompare(b.name) ||
    String(a.attributes["agent_lab.metric_key"]).localeCompare(
      String(b.attributes["agent_lab.metric_key"]),
    )
  );
}
