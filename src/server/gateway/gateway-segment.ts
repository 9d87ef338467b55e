import type { TokenUsage } from "../../domain/usage.js";
import type { ClientCall } from "./client-tools.js";

/**
 * One HTTP response of the gateway: the part of a turn between two client requests. A turn that
 * calls tools spans several (the client runs the tools and comes back with their replies); each
 * ends when the model's part of the round is over and its calls wait for the client, or with the
 * turn. Pass-through segments carry the upstream's bytes; the others are rendered from the turn.
 */
export type SegmentFinish = "stop" | "tool_calls" | "length" | "content_filter";

export interface GatewaySegment {
  /**
   * Called once by the turn that takes the segment: whether it passes the upstream through, and
   * what to do when the client goes away before the segment ends.
   */
  adopt(options: { pass_through: boolean; onDisconnect: () => void }): void;
  /**
   * True for a streaming response in pass-through: it carries the upstream's bytes, and the
   * rendering calls below are not made. A non-streaming one is always rendered.
   */
  readonly forwardsBytes: boolean;
  /** Upstream bytes, forwarded as they came (pass-through). */
  bytes(piece: Uint8Array): void;
  /** The upstream's stream is over (pass-through): what is held back goes out, the response ends. */
  endBytes(): void;
  text(delta: string): void;
  reasoning(delta: string): void;
  /** What the model said when it refused (`refusal`, as OpenAI sends it). */
  refusal(delta: string): void;
  /** A model call of this segment, for the usage the client is told (rendered segments). */
  usage(usage: TokenUsage): void;
  /** The model the endpoint says answered (a router may name another than was asked for). */
  servedBy(model: string): void;
  /** Ends a rendered segment; `calls` are the tool calls the client is to run. */
  finish(reason: SegmentFinish, calls: readonly ClientCall[]): void;
  /**
   * Ends the segment with an error in OpenAI's terms (an upstream's status kept): an HTTP error if
   * nothing was sent yet, else an error event.
   */
  fail(error: unknown): void;
  readonly ended: boolean;
}
