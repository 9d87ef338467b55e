import { z } from "zod";
import { noKeySentHint } from "./api-key-requirement.js";
import { hasVersionSegment } from "./attempt-failure.js";
import { describeConnectionFailure } from "./connection-failure.js";
import { endpointMessageFromBody, sanitizeIdentity } from "./endpoint-message.js";
import type { ResolvedEndpoint } from "./openai-config.js";

/**
 * `GET {base}/models` once, for the endpoint check: whether anything answers, and the model ids it
 * lists. One attempt with a short timeout (a check must answer while the user waits); only the
 * ids are kept, never the body, and every message names the URL and never the key.
 */

export type ModelListOutcome =
  | { reachable: true; models: string[] }
  | { reachable: true; models: null; problem: string }
  | { reachable: false; models: null; problem: string };

export const MODEL_LIST_TIMEOUT_MS = 5_000;
/** More than any endpoint lists; a longer answer is cut. */
export const MAX_LISTED_MODELS = 1_000;
const MAX_BODY_BYTES = 4 * 1024 * 1024;

const ModelList = z.looseObject({
  data: z.array(z.looseObject({ id: z.string().min(1) })),
});

export async function listEndpointModels(
  endpoint: ResolvedEndpoint,
  options: { fetch?: typeof fetch; timeout_ms?: number; signal?: AbortSignal } = {},
): Promise<ModelListOutcome> {
  const { base_url, api_key: key } = endpoint;
  const url = `${base_url}/models`;
  const timeout = AbortSignal.timeout(options.timeout_ms ?? MODEL_LIST_TIMEOUT_MS);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(url, {
      headers: { accept: "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) },
      signal,
    });
  } catch (error) {
    options.signal?.throwIfAborted();
    const problem = timeout.aborted
      ? `no answer from ${base_url} within ${options.timeout_ms ?? MODEL_LIST_TIMEOUT_MS} ms`
      : describeConnectionFailure(error, base_url, key).message;
    return { reachable: false, models: null, problem };
  }
  const text = await readCapped(response);
  if (!response.ok) {
    const said = text === null ? null : endpointMessageFromBody(text, key);
    const hint =
      response.status === 404 && !hasVersionSegment(base_url)
        ? "is `/v1` missing from the base URL?"
        : (response.status === 401 || response.status === 403) && key === null
          ? noKeySentHint(endpoint.api_key_env)
          : null;
    return {
      reachable: true,
      models: null,
      problem: `${base_url} answered ${response.status} to GET /models${said ? `: ${said}` : ""}${hint ? `; ${hint}` : ""}`,
    };
  }
  const parsed = text === null ? null : ModelList.safeParse(parseJson(text));
  if (!parsed?.success) {
    return {
      reachable: true,
      models: null,
      problem: `${base_url} answered GET /models, but not with a model list ({"data": [{"id": …}]})`,
    };
  }
  const ids = parsed.data.data
    .slice(0, MAX_LISTED_MODELS)
    .map((model) => sanitizeIdentity(model.id, key))
    .filter((id): id is string => id !== null);
  return { reachable: true, models: [...new Set(ids)] };
}

async function readCapped(response: Response): Promise<string | null> {
  try {
    const buffer = await response.arrayBuffer();
    return buffer.byteLength > MAX_BODY_BYTES ? null : new TextDecoder().decode(buffer);
  } catch {
    return null;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
