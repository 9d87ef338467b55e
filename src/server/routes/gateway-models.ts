import type { Hono } from "hono";
import { modelNotFoundError, openAIErrorResponse } from "../gateway/openai-error.js";
import {
  availableGatewayModels,
  GatewayModelNotFoundError,
  resolveGatewayModel,
} from "../gateway/upstream-resolution.js";
import type { ServerDependencies } from "../server-dependencies.js";

/**
 * `GET /v1/models` in OpenAI's list shape, so a client (or a UI that offers a model picker) sees
 * what `model` may name: `sim` and each upstream of agent-lab.yaml. `openai:MODEL` works too but is
 * not listed: listing OpenAI's models would mean a network call on every request, and the lab
 * never calls out unasked.
 */

export interface GatewayModelEntry {
  id: string;
  object: "model";
  /** Seconds since the epoch (OpenAI's field); the server's start here: nothing has a birth date. */
  created: number;
  owned_by: string;
}

export const UPSTREAM_OWNER = "agent-lab upstream";
export const LAB_OWNER = "agent-lab";

export function registerGatewayModelRoutes(app: Hono, deps: ServerDependencies): void {
  const created = Math.floor(Date.now() / 1000);
  const labConfig = () => deps.runTurnDefaults.labConfig ?? null;
  const entry = (id: string, owned_by: string): GatewayModelEntry => ({
    id,
    object: "model",
    created,
    owned_by,
  });

  app.get("/v1/models", (c) => {
    const upstreams = Object.keys(labConfig()?.upstreams ?? {});
    return c.json({
      object: "list",
      data: [entry("sim", LAB_OWNER), ...upstreams.map((name) => entry(name, UPSTREAM_OWNER))],
    });
  });

  // openai-node's `models.retrieve(id)`: any model the gateway would serve, listed or not.
  app.get("/v1/models/:model{.+}", (c) => {
    const model = c.req.param("model");
    const config = labConfig();
    try {
      const resolved = resolveGatewayModel(model, config, {
        env: deps.runTurnDefaults.env ?? process.env,
        // Resolution only: no upstream is called, so a pass_client_key one needs no key here.
        client_key: "not-sent",
      });
      const owner =
        resolved.upstream !== null
          ? UPSTREAM_OWNER
          : model.startsWith("openai:")
            ? "openai"
            : LAB_OWNER;
      return c.json(entry(model, owner));
    } catch (error) {
      if (error instanceof GatewayModelNotFoundError) {
        return openAIErrorResponse(modelNotFoundError(model, availableGatewayModels(config)));
      }
      throw error;
    }
  });
}
