import type { Environment } from "../../domain/env-references.js";
import { AgentLabError, InvalidInputError } from "../../domain/errors.js";
import type { GatewayUpstream } from "../../domain/gateway.js";
import type { ToolInvocationMode } from "../../domain/session-config.js";
import type { LabConfigFile } from "../../domain/tool-sources.js";
import { isModelString } from "../../providers/create-chat-model.js";
import { NO_KEY_ENV } from "../../providers/openai/api-key-requirement.js";

/**
 * What a gateway request's `model` means (DESIGN.md, "The gateway"): a lab model string (`sim`,
 * `sim:NAME`, `openai:MODEL`) or the name of an upstream in agent-lab.yaml. The answer is the two
 * agents' selections as a session config holds them, the mode, and the environment the adapter
 * reads its key from for this one request.
 */

/** An agent's model as a session config's `chat_agent` / `event_agent` holds it: no secret. */
export interface GatewayAgentSelection {
  model: string;
  base_url?: string;
  api_key_env?: string;
  options: Record<string, unknown>;
}

export interface GatewayModelResolution {
  chat_agent: GatewayAgentSelection;
  event_agent: GatewayAgentSelection;
  mode: ToolInvocationMode;
  /** This request's upstreams (chat or event agent) send the client's own key (`Authorization`). */
  pass_client_key: boolean;
  /** The upstream's name; null for a lab model string. */
  upstream: string | null;
  /** The upstream's `capture` (a lab model string: `auto`). */
  capture: GatewayUpstream["capture"];
  /**
   * The environment to build this request's adapters with (`createChatModel(selection, { env })`).
   * For a `pass_client_key` upstream it is a copy holding the client's key under
   * CLIENT_KEY_VARIABLE, made for this request and dropped with it: the key is in no selection,
   * config, log or record. Never store this object.
   */
  env: Environment;
}

export interface ResolveGatewayModelOptions {
  /** The server's environment (OPENAI_BASE_URL, OPENAI_API_KEY, the upstreams' key variables). */
  env: Environment;
  /** The `X-Agent-Lab-Mode` header as received, if any. */
  mode_header?: string | undefined;
  /**
   * The client's `Authorization: Bearer KEY` when it is not the lab's token (see
   * `gatewayClientKey` in security.ts): used only for a `pass_client_key` upstream.
   */
  client_key?: string | null | undefined;
}

/**
 * The variable a `pass_client_key` upstream's selection names as its `api_key_env`. It exists
 * only in the per-request environment copy; a stored session config names it and nothing more,
 * so replaying such a session outside the gateway sends no key rather than someone else's.
 */
export const CLIENT_KEY_VARIABLE = "AGENT_LAB_GATEWAY_CLIENT_KEY";

/**
 * The variable an upstream without `api_key_env` names: always absent. Without it the adapter
 * would fall back to OPENAI_API_KEY, sending the lab's OpenAI key to whatever endpoint the
 * upstream names (a local Ollama, a colleague's vLLM).
 */
export const NO_KEY_VARIABLE = NO_KEY_ENV;

export const GATEWAY_MODES: readonly ToolInvocationMode[] = ["chat_agent_tools", "dual_agent"];
export const DEFAULT_GATEWAY_MODE: ToolInvocationMode = "chat_agent_tools";

/** A request named a model the gateway cannot serve (404 `model_not_found`). */
export class GatewayModelNotFoundError extends AgentLabError {
  readonly code = "model_not_found" as const;
  constructor(
    readonly model: string,
    readonly available: readonly string[],
  ) {
    super(
      `The model ${JSON.stringify(model)} does not exist on this gateway; use one of: ${available.join(", ")}`,
    );
  }
}

/**
 * A `pass_client_key` upstream was asked for without a key of the client's own (401
 * `invalid_api_key`). Also when the only Authorization the client sent was the lab token: that
 * must never travel upstream.
 */
export class GatewayClientKeyMissingError extends AgentLabError {
  readonly code = "unauthorized" as const;
  constructor(readonly upstream: string) {
    super(
      `upstream ${upstream} sends the client's own API key (pass_client_key): send that key as Authorization: Bearer KEY, and the lab token in the header X-Agent-Lab-Token`,
    );
  }
}

/** The upstream names, then the lab's own model strings: what a 404 lists, and `/v1/models`. */
export function availableGatewayModels(labConfig: LabConfigFile | null): string[] {
  return [...Object.keys(labConfig?.upstreams ?? {}), "sim", "sim:NAME", "openai:MODEL"];
}

function upstreamNamed(labConfig: LabConfigFile | null, name: string): GatewayUpstream | undefined {
  const upstreams = labConfig?.upstreams;
  // Own keys only: `constructor` or `__proto__` as a model name must not find Object's.
  return upstreams !== undefined && Object.hasOwn(upstreams, name) ? upstreams[name] : undefined;
}

function upstreamSelection(upstream: GatewayUpstream): GatewayAgentSelection {
  return {
    model: `openai:${upstream.model}`,
    base_url: upstream.base_url,
    api_key_env: upstream.pass_client_key
      ? CLIENT_KEY_VARIABLE
      : (upstream.api_key_env ?? NO_KEY_VARIABLE),
    options: { ...upstream.options },
  };
}

/** A lab model string as a session config holds it: the adapter reads OPENAI_* as usual. */
function labSelection(model: string): GatewayAgentSelection {
  return { model, options: {} };
}

export function parseModeHeader(value: string | undefined): ToolInvocationMode | undefined {
  if (value === undefined) return undefined;
  const mode = value.trim();
  if ((GATEWAY_MODES as readonly string[]).includes(mode)) return mode as ToolInvocationMode;
  throw new InvalidInputError(
    `X-Agent-Lab-Mode: ${JSON.stringify(value)} is not a mode; use ${GATEWAY_MODES.join(" or ")}`,
  );
}

/**
 * Resolves a request's `model`. Throws GatewayModelNotFoundError (404), InvalidInputError for a
 * bad mode header or an upstream whose `event_model` names nothing (400), and
 * GatewayClientKeyMissingError (401) for a `pass_client_key` upstream without the client's key.
 */
export function resolveGatewayModel(
  requested: string,
  labConfig: LabConfigFile | null,
  options: ResolveGatewayModelOptions,
): GatewayModelResolution {
  const headerMode = parseModeHeader(options.mode_header);
  const upstream = upstreamNamed(labConfig, requested);
  if (upstream === undefined) {
    if (!isModelString(requested)) {
      throw new GatewayModelNotFoundError(requested, availableGatewayModels(labConfig));
    }
    const selection = labSelection(requested);
    return {
      chat_agent: selection,
      event_agent: { ...selection, options: {} },
      mode: headerMode ?? DEFAULT_GATEWAY_MODE,
      pass_client_key: false,
      upstream: null,
      capture: "auto",
      env: options.env,
    };
  }

  const chatAgent = upstreamSelection(upstream);
  let eventAgent: GatewayAgentSelection = { ...chatAgent, options: { ...chatAgent.options } };
  let eventUpstream: GatewayUpstream | null = upstream;
  if (upstream.event_model !== undefined && upstream.event_model !== requested) {
    const named = upstreamNamed(labConfig, upstream.event_model);
    if (named !== undefined) {
      eventAgent = upstreamSelection(named);
      eventUpstream = named;
    } else if (isModelString(upstream.event_model)) {
      eventAgent = labSelection(upstream.event_model);
      eventUpstream = null;
    } else {
      throw new InvalidInputError(
        `agent-lab.yaml: upstreams.${requested}.event_model: ${JSON.stringify(upstream.event_model)} is neither an upstream's name nor a lab model string (sim, sim:NAME, openai:MODEL)`,
      );
    }
  }

  const needsClientKey = upstream.pass_client_key || eventUpstream?.pass_client_key === true;
  let env = options.env;
  if (needsClientKey) {
    const key = options.client_key?.trim();
    if (!key) throw new GatewayClientKeyMissingError(requested);
    // A copy for this request: the server's environment is shared by every request.
    env = { ...options.env, [CLIENT_KEY_VARIABLE]: key, [NO_KEY_VARIABLE]: undefined };
  } else if (options.env[NO_KEY_VARIABLE] !== undefined) {
    env = { ...options.env, [NO_KEY_VARIABLE]: undefined };
  }

  return {
    chat_agent: chatAgent,
    event_agent: eventAgent,
    mode: headerMode ?? upstream.mode ?? DEFAULT_GATEWAY_MODE,
    pass_client_key: needsClientKey,
    upstream: requested,
    capture: upstream.capture,
    env,
  };
}
