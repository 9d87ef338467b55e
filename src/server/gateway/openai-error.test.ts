import { describe, expect, it } from "vitest";
import { InvalidInputError, TurnInProgressError } from "../../domain/errors.js";
import { ChatCompletionRequest } from "../../domain/gateway.js";
import { rememberSecretValue } from "../../domain/secrets.js";
import {
  ProviderApiError,
  ProviderConnectionError,
  ProviderStreamError,
} from "../../providers/errors.js";
import { RouteNotFoundError } from "../http-errors.js";
import {
  fromLabErrorBody,
  invalidApiKeyError,
  invalidRequestError,
  modelNotFoundError,
  openAIErrorEvent,
  openAIErrorResponse,
  toOpenAIError,
  upstreamError,
} from "./openai-error.js";
import { GatewayClientKeyMissingError, GatewayModelNotFoundError } from "./upstream-resolution.js";

describe("OpenAI-format errors", () => {
  it("400 names each zod issue by path, the first as param", () => {
    const parsed = ChatCompletionRequest.safeParse({
      model: "sim",
      messages: [{ role: "robot", content: "hi" }],
    });
    expect(parsed.success).toBe(false);
    if (parsed.success) return;
    const error = invalidRequestError(parsed.error, "request body");
    expect(error.status).toBe(400);
    expect(error.body.error).toMatchObject({
      type: "invalid_request_error",
      param: "messages.0.role",
      code: null,
    });
    expect(error.body.error.message).toMatch(/^request body: messages\.0\.role: /);
    // The same through the generic mapping.
    expect(toOpenAIError(parsed.error).body.error.param).toBe("messages.0.role");
  });

  it("401 is invalid_request_error / invalid_api_key, as OpenAI sends it", () => {
    expect(invalidApiKeyError()).toMatchObject({
      status: 401,
      body: { error: { type: "invalid_request_error", code: "invalid_api_key", param: null } },
    });
    const missing = toOpenAIError(new GatewayClientKeyMissingError("mine"));
    expect(missing.status).toBe(401);
    expect(missing.body.error.code).toBe("invalid_api_key");
    expect(missing.body.error.message).toContain("X-Agent-Lab-Token");
  });

  it("404 model_not_found names the model and what is available", () => {
    const direct = modelNotFoundError("gpt-5", ["local", "sim"]);
    const mapped = toOpenAIError(new GatewayModelNotFoundError("gpt-5", ["local", "sim"]));
    for (const error of [direct, mapped]) {
      expect(error.status).toBe(404);
      expect(error.body.error).toMatchObject({ code: "model_not_found", param: "model" });
      expect(error.body.error.message).toContain('"gpt-5"');
      expect(error.body.error.message).toContain("local, sim");
    }
  });

  it("409 for a turn already running in the session", () => {
    const error = toOpenAIError(new TurnInProgressError("s1", 3, null));
    expect(error.status).toBe(409);
    expect(error.body.error.code).toBe("turn_in_progress");
    expect(error.body.error.message).toContain("session s1 already has a turn running");
  });

  it("upstream 429 and 5xx keep their status and message, with secrets blanked", () => {
    rememberSecretValue("upstream-secret-value-123");
    const limited = upstreamError(
      new ProviderApiError({
        status: 429,
        endpointMessage: "slow down, key sk-abcdefghijklmnopqrstuvwxyz",
        requestId: null,
        retryable: true,
        attempts: 3,
      }),
      "local",
    );
    expect(limited.status).toBe(429);
    expect(limited.body.error).toMatchObject({
      type: "rate_limit_error",
      code: "rate_limit_exceeded",
    });
    expect(limited.body.error.message).toContain(
      "upstream local failed: model endpoint answered 429",
    );
    expect(limited.body.error.message).not.toContain("sk-abcdefghijklmnop");
    expect(limited.body.error.message).toContain("[redacted]");

    const failed = toOpenAIError(
      new ProviderApiError({
        status: 503,
        endpointMessage: "overloaded upstream-secret-value-123",
        requestId: "req_1",
        retryable: true,
        attempts: 1,
      }),
    );
    expect(failed.status).toBe(503);
    expect(failed.body.error.type).toBe("server_error");
    expect(failed.body.error.message).not.toContain("upstream-secret-value-123");
    expect(failed.body.error.message).toContain("the model endpoint failed");

    // A status a client cannot act on (a 302 a proxy sent) becomes a bad gateway.
    expect(
      upstreamError(
        new ProviderApiError({
          status: 302,
          endpointMessage: null,
          requestId: null,
          retryable: false,
          attempts: 1,
        }),
      ).status,
    ).toBe(502);
  });

  it("502 for an upstream that cannot be reached, naming its URL; 504 for a stall", () => {
    const unreachable = toOpenAIError(
      new ProviderConnectionError(
        "could not get a response from the model endpoint at http://127.0.0.1:9/v1: ECONNREFUSED",
        3,
      ),
      "local",
    );
    expect(unreachable.status).toBe(502);
    expect(unreachable.body.error.code).toBe("upstream_unreachable");
    expect(unreachable.body.error.message).toContain("http://127.0.0.1:9/v1");
    const stalled = toOpenAIError(new ProviderStreamError("idle_timeout", "no progress in 60 s"));
    expect(stalled.status).toBe(504);
    const cut = toOpenAIError(new ProviderStreamError("connection_lost", "the stream broke"));
    expect(cut.status).toBe(502);
  });

  it("other lab errors keep the API's status; unknown errors say nothing of themselves", () => {
    expect(toOpenAIError(new InvalidInputError("X-Agent-Lab-Mode: bad"))).toMatchObject({
      status: 400,
      body: { error: { message: "X-Agent-Lab-Mode: bad", type: "invalid_request_error" } },
    });
    const notFound = toOpenAIError(new RouteNotFoundError("POST", "/v1/embeddings"));
    expect(notFound.status).toBe(404);
    expect(notFound.body.error.message).toBe("no such API route: POST /v1/embeddings");
    const bug = toOpenAIError(new TypeError("secret internals sk-zzzzzzzzzzzzzzzzzzzz"));
    expect(bug.status).toBe(500);
    expect(bug.body.error.type).toBe("server_error");
    expect(bug.body.error.message).not.toContain("internals");
    expect(fromLabErrorBody(413, { error: { code: "payload_too_large", message: "big" } })).toEqual(
      {
        status: 413,
        body: {
          error: {
            message: "big",
            type: "invalid_request_error",
            param: null,
            code: "payload_too_large",
          },
        },
      },
    );
  });

  it("renders a JSON response and an in-stream error event", async () => {
    const error = modelNotFoundError("x", ["sim"]);
    const response = openAIErrorResponse(error);
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json()).toEqual(error.body);
    const event = openAIErrorEvent(error);
    expect(event.startsWith("data: ")).toBe(true);
    expect(event.endsWith("\n\n")).toBe(true);
    expect(JSON.parse(event.slice(6))).toEqual(error.body);
  });
});
