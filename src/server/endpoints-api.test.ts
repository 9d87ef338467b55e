import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { closedLoopbackPort } from "../../test/closed-port.js";
import { FakeOpenAIServer } from "../../test/fake-openai-server.js";
import { LabConfigFile } from "../domain/tool-sources.js";
import type { EndpointCheck, UpstreamListing } from "./routes/endpoints.js";
import { startTestServer, type TestServer } from "./test-fixtures.js";

/**
 * `GET /api/upstreams` and `POST /api/endpoints/check` over HTTP: a live endpoint (the fake OpenAI
 * server), a closed loopback port, a name that never resolves (.invalid), a missing key. The key
 * is in no answer.
 */

const KEY = "sk-test-ENDPOINT-CHECK-4b2f9e";
let endpoint: FakeOpenAIServer;
let lab: TestServer;

beforeEach(async () => {
  endpoint = await FakeOpenAIServer.start();
  const labConfig = LabConfigFile.parse({
    upstreams: {
      local: { base_url: endpoint.baseUrl, model: "llama-3", api_key_env: "LOCAL_KEY" },
      hosted: { base_url: "https://llm.example.com/v1", model: "big", api_key_env: "UNSET_KEY" },
      open: { base_url: endpoint.baseUrl, model: "qwen" },
    },
  });
  lab = await startTestServer({
    runTurnDefaults: { labConfig, env: { LOCAL_KEY: KEY, OPENAI_API_KEY: KEY } },
  });
});
afterEach(async () => {
  await lab.close();
  await endpoint.close();
});

const modelList = (...ids: string[]) => ({
  status: 200,
  headers: { "content-type": "application/json" },
  body: [JSON.stringify({ object: "list", data: ids.map((id) => ({ id, object: "model" })) })],
});

async function check(
  body: unknown,
): Promise<{ status: number; check: EndpointCheck; text: string }> {
  const response = await lab.api("/api/endpoints/check", { method: "POST", json: body });
  const text = await response.text();
  expect(text).not.toContain(KEY);
  return { status: response.status, check: JSON.parse(text) as EndpointCheck, text };
}

describe("GET /api/upstreams", () => {
  it("lists names, URLs, models and key variable names with whether each is set, never a key", async () => {
    const response = await lab.api("/api/upstreams");
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(text).not.toContain(KEY);
    const { upstreams } = JSON.parse(text) as { upstreams: UpstreamListing[] };
    expect(upstreams).toEqual([
      {
        name: "local",
        base_url: endpoint.baseUrl,
        model: "llama-3",
        mode: "chat_agent_tools",
        api_key_env: "LOCAL_KEY",
        key_set: true,
        pass_client_key: false,
      },
      expect.objectContaining({ name: "hosted", api_key_env: "UNSET_KEY", key_set: false }),
      expect.objectContaining({ name: "open", api_key_env: null, key_set: false }),
    ]);
  });
});

describe("POST /api/endpoints/check", () => {
  it("a live endpoint: reachable, its models listed, the model known, the key sent", async () => {
    endpoint.enqueue(modelList("llama-3", "qwen"), modelList("llama-3"));
    const { status, check: result } = await check({ upstream: "local" });
    expect(status).toBe(200);
    expect(result).toEqual({
      base_url: endpoint.baseUrl,
      model: "llama-3",
      reachable: true,
      key: { env: "LOCAL_KEY", present: true, needed: false },
      models: ["llama-3", "qwen"],
      model_known: true,
      problems: [],
      ok: true,
    });
    expect(endpoint.requests[0]).toMatchObject({ method: "GET", path: "/v1/models" });
    expect(endpoint.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);

    // A model the endpoint does not list is named, with what it does list.
    const unknown = await check({ base_url: endpoint.baseUrl, model: "openai:gpt-5" });
    expect(unknown.check).toMatchObject({ model: "gpt-5", model_known: false, ok: false });
    expect(unknown.check.problems).toEqual([
      `${endpoint.baseUrl} does not list the model "gpt-5"; it lists llama-3`,
    ]);
  });

  it("a closed loopback port: not reachable, 'connection refused at URL'", async () => {
    const url = `http://127.0.0.1:${await closedLoopbackPort()}/v1`;
    const { check: result } = await check({ base_url: url, model: "m" });
    expect(result).toMatchObject({ reachable: false, models: null, model_known: null, ok: false });
    expect(result.key).toEqual({ env: "OPENAI_API_KEY", present: true, needed: false });
    expect(result.problems).toEqual([`connection refused at ${url}: is the server running?`]);
  });

  it("a host that does not resolve: 'no such host', and a missing needed key said first", async () => {
    const url = "http://no-such-host.invalid/v1";
    const { check: result } = await check({ base_url: url, api_key_env: "UNSET_KEY" });
    expect(result).toMatchObject({ reachable: false, models: null, ok: false });
    expect(result.key).toEqual({ env: "UNSET_KEY", present: false, needed: true });
    expect(result.problems).toEqual([
      `\`UNSET_KEY\` is not set; the endpoint at ${url} needs a key`,
      `no such host: no-such-host.invalid (from the base URL ${url}) does not resolve`,
    ]);
  });

  it("a base URL without /v1 that answers 404 asks whether /v1 is missing", async () => {
    const bare = endpoint.baseUrl.replace(/\/v1$/, "");
    endpoint.enqueue({ status: 404, body: ['{"error":"Not Found"}'] });
    const { check: result } = await check({ base_url: bare });
    expect(result).toMatchObject({ reachable: true, models: null, ok: false });
    expect(result.problems).toEqual([
      `${bare} answered 404 to GET /models: Not Found; is \`/v1\` missing from the base URL?`,
    ]);
    expect(endpoint.requests.map((request) => request.path)).toEqual(["/models"]);
  });

  it("an upstream without api_key_env sends no key, not the lab's OPENAI_API_KEY", async () => {
    endpoint.enqueue(modelList("qwen"));
    const { check: result } = await check({ upstream: "open" });
    expect(result).toMatchObject({ ok: true, model: "qwen", model_known: true });
    expect(result.key).toEqual({ env: null, present: false, needed: false });
    expect(endpoint.requests[0]?.headers.authorization).toBeUndefined();
  });

  it("refuses bad bodies naming the field", async () => {
    for (const [body, message] of [
      [{ base_url: "ftp://x" }, "request body: base_url: must be an http or https URL"],
      [
        { upstream: "nope" },
        'no upstream "nope" in the lab config file; it has local, hosted, open',
      ],
      [{ base_url: endpoint.baseUrl, upstream: "local" }, "give base_url or upstream, not both"],
      [{ api_key_env: "not a name" }, "api_key_env"],
      // Any other variable of the lab's environment would be sent to the URL given (QA).
      [{ base_url: endpoint.baseUrl, api_key_env: "AGENT_LAB_TOKEN" }, "never AGENT_LAB_TOKEN"],
      [{ base_url: endpoint.baseUrl, api_key_env: "PGPASSWORD" }, "a name ending in KEY or TOKEN"],
      [{ base_url: endpoint.baseUrl, api_key_env: "HOME" }, "a name ending in KEY or TOKEN"],
      [{ api_key: KEY }, "api_key"],
    ] as const) {
      const { status, text } = await check(body);
      expect(status, JSON.stringify(body)).toBe(400);
      expect((JSON.parse(text) as { error: { message: string } }).error.message).toContain(message);
    }
    expect(endpoint.requests).toEqual([]);
  });
});
