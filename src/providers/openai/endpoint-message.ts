import { z } from "zod";
import { redactSecretText } from "../../domain/secrets.js";

/**
 * What an endpoint says about a failure, made safe to put in an error message: only the
 * human-readable message is taken (never the raw body), it is shortened, and the API key is
 * blanked out in case the endpoint echoes it back.
 */

export const MAX_ENDPOINT_MESSAGE_LENGTH = 500;

const REDACTED_KEY = "[redacted]";

/** Error bodies seen in the wild: OpenAI `{error:{message}}`, Ollama `{error:"..."}`, vLLM `{message}`. */
const ErrorBody = z.looseObject({
  error: z.union([z.string(), z.looseObject({ message: z.unknown().optional() })]).nullish(),
  message: z.unknown().optional(),
  detail: z.unknown().optional(),
});

/** The message inside an error body, or null when the text is not JSON or carries none. */
export function endpointMessageFromBody(text: string, apiKey: string | null): string | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // A proxy's HTML page or plain text: a raw payload, which we do not repeat.
    return null;
  }
  return endpointMessageFromValue(value, apiKey);
}

export function endpointMessageFromValue(value: unknown, apiKey: string | null): string | null {
  const parsed = ErrorBody.safeParse(value);
  if (!parsed.success) return null;
  const { error, message, detail } = parsed.data;
  const candidate =
    typeof error === "string"
      ? error
      : typeof error?.message === "string"
        ? error.message
        : typeof message === "string"
          ? message
          : typeof detail === "string"
            ? detail
            : null;
  return candidate === null ? null : sanitizeMessage(candidate, apiKey);
}

/** An OpenAI error body's `param` and `code`: short identifiers, kept only when they look like one. */
export interface EndpointErrorFields {
  param: string | null;
  code: string | null;
}

const IDENTIFIER = /^[A-Za-z0-9_.[\]-]{1,100}$/;

/**
 * The `param` and `code` of an `{error:{…}}` body, for a gateway to hand on to its client (which
 * field the endpoint refused, and why): identifiers only, never free text.
 */
export function endpointErrorFields(text: string): EndpointErrorFields {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { param: null, code: null };
  }
  const error =
    value !== null && typeof value === "object" ? (value as { error?: unknown }).error : null;
  const field = (name: "param" | "code") => {
    const found =
      error !== null && typeof error === "object" ? (error as Record<string, unknown>)[name] : null;
    // An identifier, and nothing a key redaction would touch (a key has an identifier's shape).
    return typeof found === "string" && IDENTIFIER.test(found) && redactSecretText(found) === found
      ? found
      : null;
  };
  return { param: field("param"), code: field("code") };
}

/** Blanks the key and shortens; applied to every text that reaches one of our error messages. */
export function sanitizeMessage(text: string, apiKey: string | null): string {
  // The key in use first, then every other key this process sends and well-known key shapes.
  let clean = redactSecretText(apiKey ? text.split(apiKey).join(REDACTED_KEY) : text);
  clean = clean.replace(/\s+/g, " ").trim();
  if (clean.length > MAX_ENDPOINT_MESSAGE_LENGTH) {
    clean = `${clean.slice(0, MAX_ENDPOINT_MESSAGE_LENGTH - 1)}…`;
  }
  return clean;
}

const MAX_REQUEST_ID_LENGTH = 200;

/**
 * A request id header as the lab may keep it: an endpoint (or a proxy in front of it) can put
 * anything there, the key it was sent included.
 */
export function sanitizeRequestId(value: string | null, apiKey: string | null): string | null {
  if (value === null) return null;
  const clean = sanitizeMessage(value, apiKey).slice(0, MAX_REQUEST_ID_LENGTH);
  return clean === "" ? null : clean;
}

export const MAX_IDENTITY_LENGTH = 500;

/**
 * A chunk's `model`, `id` or `system_fingerprint` as the lab may keep and show it: control
 * characters gone (they reach terminals), secrets blanked, at most MAX_IDENTITY_LENGTH characters.
 */
export function sanitizeIdentity(value: string | null, apiKey: string | null): string | null {
  if (value === null) return null;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
  const clean = sanitizeMessage(value.replace(/[\u0000-\u001f\u007f-\u009f]/g, ""), apiKey);
  return clean === "" ? null : clean.slice(0, MAX_IDENTITY_LENGTH);
}
