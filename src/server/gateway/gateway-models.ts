import type {
  ChatModel,
  ChatModelPart,
  ChatModelRequest,
  StreamOptions,
} from "../../providers/chat-model.js";

/**
 * The models of a gateway turn, wrapped: the last failure of a call is kept so that the client
 * hears the upstream's own status (a 429 stays a 429) rather than the turn's generic failure.
 */
export class WatchedModel implements ChatModel {
  readonly provider: string;
  readonly model: string;
  readonly simulated: boolean;
  readonly baseUrl: string | undefined;
  lastError: unknown = null;

  constructor(
    readonly inner: ChatModel,
    /** Adjusts each call's options (pass-through: the client's body, the byte tap). */
    readonly prepare: (options: StreamOptions) => Promise<StreamOptions> = async (options) =>
      options,
    /** After each call; `failed` when it threw (the turn's failure then ends the segment). */
    readonly finished: (failed: boolean) => void = () => {},
  ) {
    this.provider = inner.provider;
    this.model = inner.model;
    this.simulated = inner.simulated;
    this.baseUrl = inner.baseUrl;
  }

  async *stream(
    request: ChatModelRequest,
    options: StreamOptions = {},
  ): AsyncGenerator<ChatModelPart, void, undefined> {
    let failed = false;
    try {
      const prepared = await this.prepare(options);
      yield* this.inner.stream(request, prepared);
    } catch (error) {
      failed = true;
      this.lastError = error;
      throw error;
    } finally {
      this.finished(failed);
    }
  }
}
