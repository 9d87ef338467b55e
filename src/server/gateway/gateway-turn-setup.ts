import type { RequestMessage, RequestTool } from "../../domain/gateway.js";
import type { LabSessionConfigInput } from "../../domain/session-config.js";
import type { ChatModel } from "../../providers/chat-model.js";
import type { SamplingSettings } from "../../runtime/modes/agent-sampling.js";
import type { ModelProvider } from "../../runtime/turn-providers.js";
import type { SessionStore } from "../../store/session-store.js";
import type { GatewaySegment } from "./gateway-segment.js";
import type { TappedFetch } from "./upstream-fetch.js";

/** What a gateway turn (GatewayTurn) is started with. */
export interface GatewayTurnSetup {
  store: SessionStore;
  session_id: string;
  /** For a new session. */
  title: string;
  config: LabSessionConfigInput;
  /** The request's sampling settings: this turn's, whatever the session's first request said. */
  chat_sampling: SamplingSettings;
  /**
   * False when the request said `parallel_tool_calls: false`: when the lab writes the model's
   * request itself, the client gets one call per answer (see SegmentWriter.onClientCall).
   */
  parallel_tool_calls: boolean;
  message: string;
  chat_model: ChatModel;
  /**
   * Pass-through: a fetch for the turn's first call that tells `tap` of each read of the
   * upstream's answer as it arrives, so the client's first bytes do not wait for the adapter.
   */
  tapped_fetch?: TappedFetch;
  event_model: ChatModel;
  models: ModelProvider;
  tools: readonly RequestTool[];
  /** The first request's messages: a follow-up of this turn resends them first. */
  opening: readonly RequestMessage[];
  /**
   * Pass-through: each upstream call sends the client's own request body, and a streaming client
   * gets the upstream's bytes as they are. Else the lab runs the mode and renders the answer.
   */
  pass_through: boolean;
  /** How long a turn waits for the client to come back with its tools' replies. */
  client_wait_ms: number;
  /** The turn is over (ended, failed or cancelled): the session may start another. */
  onEnd(): void;
}

/** A client request that a model call of the turn answers (pass-through sends its body). */
export interface SegmentRequest {
  segment: GatewaySegment;
  body: Record<string, unknown>;
}

/**
 * A follow-up's own settings, when the lab writes the model's request itself: the call that
 * answers it (and the rounds after) go as that request asked, as its upstream would take them.
 */
export interface FollowUpSettings {
  sampling: SamplingSettings;
  parallel_tool_calls: boolean;
}
