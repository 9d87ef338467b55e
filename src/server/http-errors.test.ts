import { describe, expect, it } from "vitest";
import {
  AgentLabError,
  codeOf,
  InvalidInputError,
  SessionNotFoundError,
  StorageError,
  TurnInProgressError,
} from "../domain/errors.js";
import { ProviderStreamError } from "../providers/errors.js";
import { errorResponse, INTERNAL_ERROR_MESSAGE, PayloadTooLargeError } from "./http-errors.js";

describe("error codes", () => {
  it("codeOf gives a lab error's code, and internal_error for anything else", () => {
    expect(codeOf(new SessionNotFoundError("s1"))).toBe("session_not_found");
    expect(codeOf(new ProviderStreamError("idle_timeout", "silent"))).toBe("provider_stream_error");
    // Codes of other vocabularies (Node's, the DOM's numeric ones) are not lab codes.
    expect(codeOf(Object.assign(new Error("reset"), { code: "ECONNRESET" }))).toBe(
      "internal_error",
    );
    expect(codeOf(new DOMException("stopped", "AbortError"))).toBe("internal_error");
    expect(codeOf("a string")).toBe("internal_error");
    expect(codeOf(null)).toBe("internal_error");
  });

  it("a lab error gets its code's status and message; anything else a generic 500", () => {
    const cases: [AgentLabError, number][] = [
      [new InvalidInputError("message: the message is empty"), 400],
      [new SessionNotFoundError("s1"), 404],
      [new TurnInProgressError("s1", 2, null), 409],
      [new PayloadTooLargeError(10), 413],
      [new StorageError("database or disk is full", "SQLITE_FULL"), 503],
      [new ProviderStreamError("no_finish_reason", "the stream ended early"), 500],
    ];
    for (const [error, status] of cases) {
      expect(errorResponse(error)).toEqual({
        status,
        body: { error: { code: error.code, message: error.message } },
      });
    }
    const bug = errorResponse(new TypeError("x is undefined at /home/me/secret-path.ts"));
    expect(bug).toEqual({
      status: 500,
      body: { error: { code: "internal_error", message: INTERNAL_ERROR_MESSAGE } },
    });
  });

  it("a code outside the ErrorCode union does not compile", () => {
    class UnlistedError extends AgentLabError {
      // @ts-expect-error a new code is added to ErrorCode (and given an HTTP status) first
      readonly code = "brand_new_code" as const;
    }
    // At run time nothing stops it; the type check (npm test runs it) is the guard.
    expect(new UnlistedError("x").code).toBe("brand_new_code");
  });
});
