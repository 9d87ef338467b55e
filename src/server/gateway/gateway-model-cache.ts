import type { ChatModel } from "../../providers/chat-model.js";
import { createChatModel } from "../../providers/create-chat-model.js";
import type { UpstreamTap } from "./upstream-fetch.js";
import type { GatewayModelResolution } from "./upstream-resolution.js";

/** A request's two models. */
export interface GatewayModels {
  chat: ChatModel;
  event: ChatModel;
  /**
   * The chat model for one call whose upstream responses' reads go to `tap` as they arrive
   * (before the adapter reads them): an OpenAI-compatible upstream only. The call has it alone
   * until it gives it back.
   */
  lend?: (tap: UpstreamTap) => LentModel;
}

/** A chat model lent to one call; `release` once the call is over (a second call is a no-op). */
export interface LentModel {
  model: ChatModel;
  release(): void;
}

/** A fetch telling the tap `tapOf` names when it is called (see tappedUpstreamFetch). */
export type TappedFetch = (tapOf: () => UpstreamTap | null) => typeof globalThis.fetch;

/** Distinct selections kept (a client may name any `openai:MODEL`: the cache stays bounded). */
const MAX_ENTRIES = 64;
/** Idle lendable adapters kept per selection: as many as calls that start at once. */
const MAX_IDLE = 8;

/**
 * The adapters of a gateway request, built once per selection rather than per request: building
 * one resolves and validates its config, and its first call resolves its headers; on the lab's
 * side of a request these came before the upstream call started (a quarter of a millisecond,
 * cold, for the two models of a turn). An OpenAI adapter holds nothing of a call, so turns share
 * it. Not kept: a request whose upstream sends the client's own key (its environment is a copy
 * made for that request, which must not outlive it), and the simulated model (built per turn,
 * as before). The server's environment is read when a selection is first built.
 *
 * A tapped call's adapter cannot be shared (its tap is its call's): those are lent, one call at
 * a time, and kept for the next call when given back.
 */
export class GatewayModelCache {
  readonly #models = new Map<string, { model: ChatModel; lender: ModelLender | null }>();

  constructor(
    readonly fetch: typeof globalThis.fetch,
    /** The same fetch telling a tap of a response's reads (see `GatewayModels.lend`). */
    readonly tappedFetch?: TappedFetch,
  ) {}

  models(resolution: GatewayModelResolution): GatewayModels {
    const upstream = { env: resolution.env, fetch: this.fetch };
    const tappedFetch = this.tappedFetch;
    if (resolution.pass_client_key) {
      const chat = createChatModel(resolution.chat_agent, upstream);
      const event = createChatModel(resolution.event_agent, upstream);
      if (tappedFetch === undefined || chat.provider !== "openai") return { chat, event };
      return {
        chat,
        event,
        lend: (tap) => ({
          model: createChatModel(resolution.chat_agent, {
            env: resolution.env,
            fetch: tappedFetch(() => tap),
          }),
          release: () => {},
        }),
      };
    }
    const chat = this.#entry(resolution.chat_agent, upstream);
    const event = this.#entry(resolution.event_agent, upstream).model;
    const lender = chat.lender;
    if (lender === null) return { chat: chat.model, event };
    return { chat: chat.model, event, lend: (tap) => lender.lend(tap) };
  }

  /** How many adapters are kept (for tests). */
  get size(): number {
    return this.#models.size;
  }

  #entry(
    selection: GatewayModelResolution["chat_agent"],
    upstream: { env: GatewayModelResolution["env"]; fetch: typeof globalThis.fetch },
  ): { model: ChatModel; lender: ModelLender | null } {
    const key = JSON.stringify(selection);
    const kept = this.#models.get(key);
    if (kept !== undefined) return kept;
    const model = createChatModel(selection, upstream);
    if (model.provider !== "openai") return { model, lender: null };
    if (this.#models.size >= MAX_ENTRIES) {
      const oldest = this.#models.keys().next().value;
      if (oldest !== undefined) this.#models.delete(oldest);
    }
    const tappedFetch = this.tappedFetch;
    const entry = {
      model,
      lender:
        tappedFetch === undefined
          ? null
          : new ModelLender((tapOf) =>
              createChatModel(selection, { env: upstream.env, fetch: tappedFetch(tapOf) }),
            ),
    };
    this.#models.set(key, entry);
    return entry;
  }
}

/**
 * Adapters of one selection, each with a tap of its own that its fetch reads when a call sends
 * its request: lent to one call at a time, so a response's reads reach only that call's tap.
 */
class ModelLender {
  readonly #idle: { model: ChatModel; tap: UpstreamTap | null }[] = [];

  constructor(readonly build: (tapOf: () => UpstreamTap | null) => ChatModel) {}

  lend(tap: UpstreamTap): LentModel {
    let entry = this.#idle.pop();
    if (entry === undefined) {
      const made: { model: ChatModel | null; tap: UpstreamTap | null } = { model: null, tap: null };
      made.model = this.build(() => made.tap);
      entry = made as { model: ChatModel; tap: UpstreamTap | null };
    }
    const lent = entry;
    lent.tap = tap;
    let released = false;
    return {
      model: lent.model,
      release: () => {
        if (released) return;
        released = true;
        lent.tap = null;
        if (this.#idle.length < MAX_IDLE) this.#idle.push(lent);
      },
    };
  }
}
