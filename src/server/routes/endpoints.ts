import type { Hono } from "hono";
import { z } from "zod";
import type { EndpointCheck, UpstreamListing } from "../../domain/endpoint-check.js";
import type { Environment } from "../../domain/env-references.js";
import { InvalidInputError } from "../../domain/errors.js";
import type { GatewayUpstream } from "../../domain/gateway.js";
import { KeyVariable } from "../../domain/key-variable.js";
import { missingKeyMessage, NO_KEY_ENV } from "../../providers/openai/api-key-requirement.js";
import { listEndpointModels } from "../../providers/openai/model-list.js";
import { resolveEndpoint } from "../../providers/openai/openai-config.js";
import { readJsonBody } from "../request-body.js";
import type { ServerDependencies } from "../server-dependencies.js";

/**
 * Endpoints that explain themselves: the upstreams of agent-lab.yaml as the new-session form offers
 * them, and a check of an endpoint before a session is created on it (reachable? key present?
 * model known?). The server fetches the endpoint's model list, never the browser; keys are read
 * from the server's environment and only ever said to be present or not.
 */

export const EndpointCheckBody = z
  .strictObject({
    /** An OpenAI-compatible base URL (`http://127.0.0.1:11434/v1`); default $OPENAI_BASE_URL, else OpenAI's. */
    base_url: z.string().trim().min(1).optional(),
    /** An upstream of agent-lab.yaml, instead of base_url. */
    upstream: z.string().min(1).optional(),
    /** The model to look for in the list; `openai:` in front is ignored. Default: the upstream's. */
    model: z.string().trim().min(1).optional(),
    /** The variable holding the key; default OPENAI_API_KEY (an upstream: its own). */
    api_key_env: KeyVariable.optional(),
  })
  .refine((body) => body.base_url === undefined || body.upstream === undefined, {
    message: "give base_url or upstream, not both",
    path: ["upstream"],
  });
export type EndpointCheckBody = z.output<typeof EndpointCheckBody>;

export type { EndpointCheck, UpstreamListing };

export function registerEndpointRoutes(app: Hono, deps: ServerDependencies): void {
  const env = (): Environment => deps.runTurnDefaults.env ?? process.env;
  const upstreams = (): Record<string, GatewayUpstream> =>
    deps.runTurnDefaults.labConfig?.upstreams ?? {};

  app.get("/api/upstreams", (c) => {
    const listing: UpstreamListing[] = Object.entries(upstreams()).map(([name, upstream]) => ({
      name,
      base_url: upstream.base_url,
      model: upstream.model,
      mode: upstream.mode,
      api_key_env: upstream.api_key_env ?? null,
      key_set: upstream.api_key_env ? Boolean(env()[upstream.api_key_env]?.trim()) : false,
      pass_client_key: upstream.pass_client_key,
    }));
    return c.json({ upstreams: listing });
  });

  app.post("/api/endpoints/check", async (c) => {
    const body = await readJsonBody(c, EndpointCheckBody, deps.maxBodyBytes);
    return c.json(await checkEndpoint(body, upstreams(), env(), c.req.raw.signal));
  });
}

export async function checkEndpoint(
  body: EndpointCheckBody,
  upstreams: Record<string, GatewayUpstream>,
  env: Environment,
  signal?: AbortSignal,
): Promise<EndpointCheck> {
  let selection: { base_url?: string; api_key_env?: string } = {
    ...(body.base_url !== undefined ? { base_url: body.base_url } : {}),
    ...(body.api_key_env !== undefined ? { api_key_env: body.api_key_env } : {}),
  };
  let model = body.model?.replace(/^openai:/, "") ?? null;
  let clientKey = false;
  if (body.upstream !== undefined) {
    const upstream = Object.hasOwn(upstreams, body.upstream) ? upstreams[body.upstream] : undefined;
    if (upstream === undefined) {
      const names = Object.keys(upstreams);
      throw new InvalidInputError(
        `request body: upstream: no upstream ${JSON.stringify(body.upstream)} in the lab config file${names.length > 0 ? `; it has ${names.join(", ")}` : " (it has none)"}`,
      );
    }
    clientKey = upstream.pass_client_key;
    // As the gateway sends it: the upstream's own variable, else no key at all.
    selection = { base_url: upstream.base_url, api_key_env: upstream.api_key_env ?? NO_KEY_ENV };
    model ??= upstream.model;
  }
  const endpoint = resolveEndpoint(selection, env, "request body: ");
  const problems: string[] = [];
  const keyMissing = endpoint.api_key === null && endpoint.key_needed && !clientKey;
  if (keyMissing) problems.push(missingKeyMessage(endpoint.api_key_env, endpoint.base_url));
  const listed = await listEndpointModels(endpoint, { ...(signal ? { signal } : {}) });
  if ("problem" in listed) problems.push(listed.problem);
  const model_known =
    model === null || listed.models === null ? null : listed.models.includes(model);
  if (model_known === false) {
    const some = (listed.models ?? []).slice(0, 12);
    problems.push(
      `${endpoint.base_url} does not list the model ${JSON.stringify(model)}${some.length > 0 ? `; it lists ${some.join(", ")}${(listed.models?.length ?? 0) > some.length ? ", …" : ""}` : "; it lists none"}`,
    );
  }
  const hiddenEnv = endpoint.api_key_env === NO_KEY_ENV || clientKey;
  return {
    base_url: endpoint.base_url,
    model,
    reachable: listed.reachable,
    key: {
      env: hiddenEnv ? null : endpoint.api_key_env,
      present: endpoint.api_key !== null,
      needed: endpoint.key_needed && !clientKey,
    },
    models: listed.models,
    model_known,
    problems,
    ok: problems.length === 0,
  };
}
