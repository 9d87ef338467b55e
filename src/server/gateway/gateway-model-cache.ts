import type { ChatModel } from "../../providers/chat-model.js";
import { createChatModel } from "../../providers/create-chat-model.js";
import type { TappedFetch } from "./upstream-fetch.js";
import type { GatewayModelResolution } from "./upstream-resolution.js";

/** A request's two models. */
export interface GatewayModels {
  chat: ChatModel;
  event: ChatModel;
  /**
   * For an OpenAI-compatible chat upstream: a fetch for one call of `chat` (StreamOptions.fetch)
   * that tells `tap` of each read of the upstream's answer as it arrives, before the adapter reads
   * it.
   */
  tappedFetch?: TappedFetch;
}

/**
 * A pass-through request is one upstream call, and the client retries it (openai-node and the AI
 * SDK twice by default): the adapter's own retries under each of the client's attempts made a
 * failing call cost the upstream nine requests instead of three. So the call is one attempt,
 * unless the upstream's `options.max_retries` asks for more. Applied to the adapter only, not to
 * the session's stored config: a fork or replay of the session runs with the config's retries.
 * dual_agent keeps them: its request is several calls (chat, repair, the next round), and one
 * failing would make the client's retry run, and pay for, every call before it again.
 */
function oneAttempt(
  selection: GatewayModelResolution["chat_agent"],
): GatewayModelResolution["chat_agent"] {
  if (!selection.model.startsWith("openai:") || "max_retries" in selection.options) {
    return selection;
  }
  return { ...selection, options: { ...selection.options, max_retries: 0 } };
}

/** Distinct selections kept (a client may name any `openai:MODEL`: the cache stays bounded). */
const MAX_ENTRIES = 64;

/**
 * The adapters of a gateway request, built once per selection rather than per request: building
 * one resolves and validates its config, and its first call resolves its headers; on the lab's
 * side of a request these came before the upstream call started (a quarter of a millisecond,
 * cold, for the two models of a turn). An OpenAI adapter holds nothing of a call, so turns share
 * it. Not kept: a request whose upstream sends the client's own key (its environment is a copy
 * made for that request, which must not outlive it), and the simulated model (built per turn,
 * as before). The server's environment is read when a selection is first built.
 */
export class GatewayModelCache {
  readonly #models = new Map<string, ChatModel>();

  constructor(
    readonly fetch: typeof globalThis.fetch,
    /** The same fetch telling a tap of a 2xx response's reads (see `GatewayModels.tappedFetch`). */
    readonly tapped?: TappedFetch,
  ) {}

  models(resolution: GatewayModelResolution): GatewayModels {
    const upstream = { env: resolution.env, fetch: this.fetch };
    // The event agent of a pass-through request makes no call; alike, one adapter serves both.
    const passThrough = resolution.mode === "chat_agent_tools";
    const chatAgent = passThrough ? oneAttempt(resolution.chat_agent) : resolution.chat_agent;
    const eventAgent = passThrough ? oneAttempt(resolution.event_agent) : resolution.event_agent;
    const models = resolution.pass_client_key
      ? {
          chat: createChatModel(chatAgent, upstream),
          event: createChatModel(eventAgent, upstream),
        }
      : {
          chat: this.#model(chatAgent, upstream),
          event: this.#model(eventAgent, upstream),
        };
    const tapped = this.tapped;
    return tapped === undefined || models.chat.provider !== "openai"
      ? models
      : { ...models, tappedFetch: tapped };
  }

  /** How many adapters are kept (for tests). */
  get size(): number {
    return this.#models.size;
  }

  #model(
    selection: GatewayModelResolution["chat_agent"],
    upstream: { env: GatewayModelResolution["env"]; fetch: typeof globalThis.fetch },
  ): ChatModel {
    const key = JSON.stringify(selection);
    const kept = this.#models.get(key);
    if (kept !== undefined) return kept;
    const model = createChatModel(selection, upstream);
    if (model.provider !== "openai") return model;
    if (this.#models.size >= MAX_ENTRIES) {
      const oldest = this.#models.keys().next().value;
      if (oldest !== undefined) this.#models.delete(oldest);
    }
    this.#models.set(key, model);
    return model;
  }
}
