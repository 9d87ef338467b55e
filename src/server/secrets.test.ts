import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  completionStream,
  errorReply,
  FakeOpenAIServer,
  streamReply,
} from "../../test/fake-openai-server.js";
import type { SessionRecord } from "../domain/records.js";
import { startTestServer, type TestServer } from "./test-fixtures.js";

const API_KEY = "sk-live-SECRET-0123456789abcdefghijklmnop";
const TOKEN = "server-token-SECRET-abcdef0123456789";

describe("no secret in any response or log", () => {
  let endpoint: FakeOpenAIServer;
  let lab: TestServer;
  beforeEach(async () => {
    vi.stubEnv("OPENAI_API_KEY", API_KEY);
    endpoint = await FakeOpenAIServer.start();
    lab = await startTestServer({ token: TOKEN });
  });
  afterEach(async () => {
    await lab.close();
    await endpoint.close();
    vi.unstubAllEnvs();
  });

  it("keys stay in the environment and the token in the headers, whatever the API is asked", async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const texts: string[] = [];
    const call = async (path: string, init: Parameters<TestServer["api"]>[1] = {}) => {
      const response = await lab.api(path, { ...init, headers: { ...auth, ...init.headers } });
      const text = await response.text();
      texts.push(`${[...response.headers].join("\n")}\n${text}`);
      return { status: response.status, text };
    };

    // A config holding a key is refused, and the refusal does not repeat it.
    const refused = await call("/api/sessions", {
      method: "POST",
      json: { title: "bad", config: { chat_agent: { model: "openai:m", api_key: API_KEY } } },
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/config\.chat_agent\.api_key: secrets are never stored/);

    const created = await call("/api/sessions", {
      method: "POST",
      json: {
        title: "hosted",
        config: {
          tool_invocation_mode: "chat_agent_tools",
          chat_agent: {
            model: "openai:gpt-test",
            base_url: endpoint.baseUrl,
            api_key_env: "OPENAI_API_KEY",
            options: { max_retries: 0 },
          },
        },
      },
    });
    expect(created.status).toBe(201);
    const { id } = (JSON.parse(created.text) as { session: SessionRecord }).session;

    endpoint.enqueue(
      streamReply(completionStream({ text: ["Hello ", "from the endpoint"] })),
      errorReply(401, "Incorrect API key provided"),
    );
    const ok = await call(`/api/sessions/${id}/turns`, { method: "POST", json: { message: "hi" } });
    expect(ok.text).toMatch(/event: turn_end/);
    const failed = await call(`/api/sessions/${id}/turns`, {
      method: "POST",
      json: { message: "again" },
    });
    expect(failed.text).toMatch(/event: error/);
    // The key really was in play: the endpoint received it.
    expect(endpoint.requests[0]?.headers.authorization).toBe(`Bearer ${API_KEY}`);

    for (const path of [
      "/api/health",
      "/api/sessions",
      `/api/sessions/${id}`,
      `/api/sessions/${id}/messages`,
      `/api/sessions/${id}/audit`,
      `/api/sessions/${id}/usage`,
      `/api/sessions/${id}/turns`,
      `/api/sessions/${id}/export`,
      "/api/openapi.json",
      "/api/missing",
      "/",
    ]) {
      expect((await call(path)).status, path).toBeLessThan(600);
    }
    const unauthorized = await lab.api("/api/sessions");
    texts.push(await unauthorized.text());
    const wrong = await lab.api("/api/sessions", {
      headers: { authorization: `Bearer ${TOKEN.slice(0, -2)}` },
    });
    texts.push(await wrong.text());

    for (const text of [...texts, ...lab.logs]) {
      expect(text).not.toContain(API_KEY);
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain("SECRET");
    }
    expect(texts.some((text) => text.includes("OPENAI_API_KEY"))).toBe(true); // the name is fine
  });

  it("an unexpected failure is a generic 500: no stack, no message, no token; the log has the cause", async () => {
    const original = lab.store.listSessionPage.bind(lab.store);
    lab.store.listSessionPage = () => {
      throw new Error(`database exploded near ${TOKEN}`);
    };
    try {
      const response = await lab.api("/api/sessions", {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(response.status).toBe(500);
      const text = await response.text();
      expect(JSON.parse(text)).toStrictEqual({
        error: {
          code: "internal_error",
          message: "internal server error; the server's log has the details",
        },
      });
      expect(text).not.toMatch(/exploded|at |\.ts/);
      expect(lab.logs.join("\n")).toMatch(/database exploded near \[redacted\]/);
      expect(lab.logs.join("\n")).not.toContain(TOKEN);
    } finally {
      lab.store.listSessionPage = original;
    }
  });
});
