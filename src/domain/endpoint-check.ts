import type { GatewayUpstream } from "./gateway.js";

/**
 * What `GET /api/upstreams` and `POST /api/endpoints/check` answer (server/routes/endpoints.ts),
 * shared with the web UI. Key variables appear by name, with whether they are set; never a key.
 */

export interface EndpointCheck {
  base_url: string;
  /** The model looked for (without `openai:`), or null. */
  model: string | null;
  /** Something answered HTTP at the base URL. */
  reachable: boolean;
  /** The variable's name and whether it holds a value; never the value. */
  key: { env: string | null; present: boolean; needed: boolean };
  /** The ids `GET {base}/models` listed, or null when it did not answer with a list. */
  models: string[] | null;
  /** Whether the list has the model; null without a model or a list. */
  model_known: boolean | null;
  /** What may stand in the way, in words that name the URL. */
  problems: string[];
  /** No problem: the endpoint answers with a list holding the model, and a needed key is set. */
  ok: boolean;
}

export interface UpstreamListing {
  name: string;
  base_url: string;
  model: string;
  mode: GatewayUpstream["mode"];
  /** The variable's name (null: the upstream takes no key, or the client's own). */
  api_key_env: string | null;
  key_set: boolean;
  pass_client_key: boolean;
}
