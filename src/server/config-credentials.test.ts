import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  completionStream,
  errorReply,
  FakeOpenAIServer,
  streamReply,
} from "../../test/fake-openai-server.js";
import type { SessionRecord } from "../domain/records.js";
import { startTestServer, type TestServer } from "./test-fixtures.js";

/**
 * Issue 9, point 5: no credential is kept. A config holding one, under any name, is refused with
 * the field named; a key an endpoint echoes back is redacted from everything the lab stores.
 */

/** `${NAME}`: how a header names an environment variable. */
function envReference(name: string): string {
  return `\${${name}}`;
}

const KEY = "lab-key-0f9e8d7c6b5a4f3e2d1c0b9a";

/** [what the case is, the config, the field path the refusal must name] */
const REFUSED: [string, Record<string, unknown>, string][] = [
  ...["x-api-key", "Authorization", "x-goog-api-key", "Ocp-Apim-Subscription-Key", "Cookie"].map(
    (header): [string, Record<string, unknown>, string] => [
      `options.headers.${header}`,
      { chat_agent: { model: "sim", options: { headers: { [header]: KEY } } } },
      `config.chat_agent.options.headers.${header}`,
    ],
  ),
  [
    "a literal value in an unlisted header",
    { chat_agent: { model: "sim", options: { headers: { "X-Gateway-Auth": KEY } } } },
    "config.chat_agent.options.headers.X-Gateway-Auth",
  ],
  ["a token field", { chat_agent: { model: "sim", token: KEY } }, "config.chat_agent.token"],
  ["an x-api-key field", { extra: { "x-api-key": KEY } }, "config.extra.x-api-key"],
  [
    "api-key in base_url's query",
    { chat_agent: { model: "openai:m", base_url: `http://127.0.0.1:9/v1?api-key=${KEY}` } },
    "config.chat_agent.base_url",
  ],
  [
    "key in base_url's query",
    { chat_agent: { model: "openai:m", base_url: `http://127.0.0.1:9/v1?key=${KEY}` } },
    "config.chat_agent.base_url",
  ],
  [
    "user:password in base_url",
    { chat_agent: { model: "openai:m", base_url: `http://user:${KEY}@127.0.0.1:9/v1` } },
    "config.chat_agent.base_url",
  ],
];

describe("a config that holds a credential is refused, with the field named", () => {
  let lab: TestServer;
  beforeEach(async () => {
    lab = await startTestServer();
  });
  afterEach(async () => {
    await lab.close();
  });

  it.each(REFUSED)("%s: refused by the store API and by HTTP", async (_, config, field) => {
    expect(() => lab.store.createSession({ title: "t", config })).toThrow(
      new RegExp(`${field.replace(/^config\./, "").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:`),
    );
    const response = await lab.api("/api/sessions", {
      method: "POST",
      json: { title: "t", config },
    });
    const text = await response.text();
    expect(response.status).toBe(400);
    expect(text).toContain(`${field}:`);
    expect(text).not.toContain(KEY);
    expect(lab.store.listSessions()).toHaveLength(0);
  });

  it("an imported document with a credential in its config is refused, naming the field", async () => {
    const id = lab.store.createSession({ title: "clean", config: {} });
    const document = lab.store.exportSession(id) as { session: { config: object } };
    document.session.config = { chat_agent: { options: { headers: { "x-api-key": KEY } } } };
    const response = await lab.api("/api/import", { method: "POST", json: document });
    const text = await response.text();
    expect(response.status).toBe(400);
    expect(text).toContain("session.config.chat_agent.options.headers.x-api-key:");
    expect(text).not.toContain(KEY);
  });

  it("headers naming an environment variable are accepted, and stored as the reference", async () => {
    const config = {
      chat_agent: {
        model: "openai:m",
        base_url: "http://127.0.0.1:9/v1",
        options: {
          headers: {
            Authorization: `Bearer ${envReference("GATEWAY_KEY")}`,
            "X-Title": "agent-lab",
          },
        },
      },
    };
    const response = await lab.api("/api/sessions", {
      method: "POST",
      json: { title: "ok", config },
    });
    expect(response.status).toBe(201);
    const { session } = (await response.json()) as { session: SessionRecord };
    expect(JSON.stringify(session.config)).toContain(`Bearer ${envReference("GATEWAY_KEY")}`);
  });
});

describe("a key the endpoint echoes back is kept nowhere", () => {
  let endpoint: FakeOpenAIServer;
  let lab: TestServer;
  beforeEach(async () => {
    vi.stubEnv("LAB_TEST_KEY", KEY);
    vi.stubEnv("LAB_GATEWAY_KEY", `${KEY}-gateway`);
    endpoint = await FakeOpenAIServer.start();
    lab = await startTestServer();
  });
  afterEach(async () => {
    await lab.close();
    await endpoint.close();
    vi.unstubAllEnvs();
  });

  it("not in the database file, the audit API, the SSE stream or the export", async () => {
    const created = await lab.api("/api/sessions", {
      method: "POST",
      json: {
        title: "echo",
        config: {
          tool_invocation_mode: "chat_agent_tools",
          chat_agent: {
            model: "openai:gpt-test",
            base_url: endpoint.baseUrl,
            api_key_env: "LAB_TEST_KEY",
            options: {
              retry_base_delay_ms: 1,
              retry_max_delay_ms: 1,
              headers: { "X-Gateway-Key": envReference("LAB_GATEWAY_KEY") },
            },
          },
        },
      },
    });
    expect(created.status).toBe(201);
    const { id } = ((await created.json()) as { session: SessionRecord }).session;

    // A 429 echoing both secrets in its message and its request id, then a success doing so too.
    const echo = `Bearer ${KEY} / ${KEY}-gateway`;
    endpoint.enqueue(
      errorReply(429, `rate limited for key ${echo}`, {
        "x-request-id": `req-${KEY}`,
        "retry-after-ms": "1",
      }),
      streamReply(completionStream({ text: ["fine"] }), {
        headers: { "x-request-id": `req-${KEY}-gateway` },
      }),
      errorReply(400, `bad request for ${echo}`, { "x-request-id": `req-${KEY}` }),
    );
    const first = await lab.api(`/api/sessions/${id}/turns`, {
      method: "POST",
      json: { message: "hi" },
    });
    const firstStream = await first.text();
    const second = await lab.api(`/api/sessions/${id}/turns`, {
      method: "POST",
      json: { message: "again" },
    });
    const secondStream = await second.text();

    // The secrets really were in play: sent, resolved from the environment at request time.
    expect(endpoint.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(endpoint.requests[0]?.headers["x-gateway-key"]).toBe(`${KEY}-gateway`);
    expect(firstStream).toMatch(/event: retry/);
    expect(firstStream).toMatch(/event: turn_end/);
    expect(secondStream).toMatch(/event: error/);
    expect(secondStream).toMatch(/\[redacted\]/);

    const audit = await (await lab.api(`/api/sessions/${id}/audit`)).text();
    expect(audit).toMatch(/provider_retry/);
    const exported = await (await lab.api(`/api/sessions/${id}/export`)).text();
    const session = await (await lab.api(`/api/sessions/${id}`)).text();
    const files = [lab.store.path, `${lab.store.path}-wal`].map((path) => {
      try {
        return readFileSync(path).toString("latin1");
      } catch {
        return "";
      }
    });
    for (const [where, text] of Object.entries({
      firstStream,
      secondStream,
      audit,
      exported,
      session,
      database: files.join("\n"),
      logs: lab.logs.join("\n"),
    })) {
      expect(text, where).not.toContain(KEY);
    }
  });
});
