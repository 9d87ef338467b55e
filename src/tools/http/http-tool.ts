import { type Environment, resolveHeaders } from "../../domain/env-references.js";
import { redactSecretText } from "../../domain/secrets.js";
import type { HttpToolDefinition } from "../../domain/tool-sources.js";
import type { Tool } from "../tool.js";
import { readLimitedBody } from "./read-limited-body.js";

/** Enough of an error body to say what went wrong, short enough for a model to read. */
const ERROR_EXCERPT_BYTES = 300;

/**
 * One HTTP tool: the arguments POSTed as JSON, the response body (parsed JSON, else text) as the
 * result. Headers are resolved from the environment at each call, so a rotated token is picked up
 * and the definition never holds the value. Redirects are not followed: a redirect to another host
 * would carry the arguments (and, for some clients, the headers) somewhere nobody configured.
 */
export function httpTool(definition: HttpToolDefinition, env: Environment): Tool {
  return {
    name: definition.name,
    description: definition.description,
    parameters: definition.parameters,
    timeout_ms: definition.timeout_ms,
    requires_approval: definition.requires_approval,
    source: "http",
    execute: (args, { signal }) => callHttpTool(definition, env, args, signal),
  };
}

async function callHttpTool(
  definition: HttpToolDefinition,
  env: Environment,
  args: Record<string, unknown>,
  signal: AbortSignal,
): Promise<unknown> {
  const where = `HTTP tool ${definition.name}`;
  const headers = {
    ...resolveHeaders(definition.headers, env, `${where}: headers`),
    "content-type": "application/json",
    accept: "application/json, text/plain;q=0.9, */*;q=0.5",
  };
  let response: Response;
  try {
    // `signal` is aborted by the registry at `timeout_ms` (the tool's timeout), which then reports
    // the timeout itself; the abort stops the request and the body read alike.
    response = await fetch(definition.url, {
      method: "POST",
      headers,
      body: JSON.stringify(args),
      redirect: "manual",
      signal,
    });
  } catch (error) {
    throw new Error(`${where}: request failed: ${redactSecretText(causeOf(error))}`);
  }
  if (!response.ok) {
    const { text, cut } = await readLimitedBody(response, ERROR_EXCERPT_BYTES);
    const excerpt = redactSecretText(text.replace(/\s+/g, " ").trim());
    const redirect =
      response.status >= 300 && response.status < 400 ? " (redirects are not followed)" : "";
    throw new Error(
      `${where}: HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}${redirect}${excerpt ? `: ${excerpt}${cut ? "…" : ""}` : ""}`,
    );
  }
  const body = await readLimitedBody(response, definition.max_response_bytes);
  const { cut, bytes } = body;
  const text = redactSecretText(body.text);
  if (cut) {
    return `${text}…[cut: response over max_response_bytes (${definition.max_response_bytes}); the rest was not read]`;
  }
  const type = response.headers.get("content-type") ?? "";
  if (/\bjson\b/i.test(type) || /^\s*[[{]/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      // A body that says JSON and is not: the text is still worth more to the model than nothing.
    }
  }
  return bytes === 0 ? "" : text;
}

/** fetch's "fetch failed" hides the reason (ECONNREFUSED, …) in `cause`. */
function causeOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause;
  if (cause instanceof Error && cause.message) return `${error.message} (${cause.message})`;
  return error.message;
}
