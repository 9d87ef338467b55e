import OpenAI, { AuthenticationError, NotFoundError } from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { LabConfigFile } from "../domain/tool-sources.js";
import { startTestServer, type TestServer } from "./test-fixtures.js";

const labConfig = LabConfigFile.parse({
  upstreams: {
    local: { base_url: "http://127.0.0.1:9/v1", model: "qwen3:8b" },
    byok: { base_url: "http://127.0.0.1:9/v1", model: "m", pass_client_key: true },
  },
});

describe("GET /v1/models", () => {
  let lab: TestServer | undefined;
  afterEach(async () => {
    await lab?.close();
    lab = undefined;
  });

  const client = (server: TestServer, apiKey: string, headers: Record<string, string> = {}) =>
    new OpenAI({
      apiKey,
      baseURL: new URL("/v1", server.url).toString(),
      defaultHeaders: headers,
      maxRetries: 0,
    });

  it("lists sim and each upstream to the openai client, the token as its API key", async () => {
    lab = await startTestServer({
      runTurnDefaults: { labConfig, env: { OPENAI_API_KEY: "sk-test-not-used-000000" } },
    });
    const models = [];
    for await (const model of client(lab, lab.server.token ?? "").models.list()) {
      models.push(model);
    }
    expect(models.map((model) => [model.id, model.owned_by])).toEqual([
      ["sim", "agent-lab"],
      ["local", "agent-lab upstream"],
      ["byok", "agent-lab upstream"],
    ]);
    for (const model of models) {
      expect(model.object).toBe("model");
      expect(Number.isInteger(model.created)).toBe(true);
    }
    const raw = await lab.api("/v1/models");
    expect(await raw.json()).toMatchObject({ object: "list" });
  });

  it("retrieves any model the gateway serves; an unknown one is 404 model_not_found", async () => {
    lab = await startTestServer({ runTurnDefaults: { labConfig } });
    const openai = client(lab, lab.server.token ?? "");
    expect(await openai.models.retrieve("local")).toMatchObject({
      id: "local",
      owned_by: "agent-lab upstream",
    });
    expect(await openai.models.retrieve("openai:gpt-4.1-mini")).toMatchObject({
      id: "openai:gpt-4.1-mini",
      owned_by: "openai",
    });
    expect((await openai.models.retrieve("sim:fast")).owned_by).toBe("agent-lab");
    const error = await openai.models.retrieve("gpt-5").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).code).toBe("model_not_found");
    expect((error as NotFoundError).message).toContain("local, byok, sim");
  });

  it("without a lab config file: sim only", async () => {
    lab = await startTestServer();
    const ids = [];
    for await (const model of client(lab, lab.server.token ?? "").models.list()) ids.push(model.id);
    expect(ids).toEqual(["sim"]);
  });

  it("refuses a missing or wrong token as OpenAI does (401 invalid_api_key)", async () => {
    lab = await startTestServer({ runTurnDefaults: { labConfig } });
    for (const key of ["wrong-token-0000000000", "sk-some-upstream-key-000000"]) {
      const error = await client(lab, key)
        .models.list()
        .catch((caught: unknown) => caught);
      expect(error, key).toBeInstanceOf(AuthenticationError);
      expect((error as AuthenticationError).code).toBe("invalid_api_key");
      expect((error as AuthenticationError).type).toBe("invalid_request_error");
    }
    // The lab token in X-Agent-Lab-Token, an upstream's key as the API key (pass_client_key).
    const byok = client(lab, "sk-some-upstream-key-000000", {
      "X-Agent-Lab-Token": lab.server.token ?? "",
    });
    expect((await byok.models.list()).data).toHaveLength(3);
  });
});
