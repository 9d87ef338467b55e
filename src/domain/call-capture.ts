import { z } from "zod";
import type { AgentRole } from "./usage.js";

/**
 * What the lab keeps of each model call's wire traffic, so any call can be opened later: the
 * exact request body sent (messages, tools, parameters; headers and keys are never part of it)
 * and the raw stream that came back (SSE text, `<event>` tags and all).
 *
 * `payloads`: `auto` keeps them for the simulated model and endpoints on a loopback address
 * (nothing leaves the machine, and they cost nothing to look at), `on` and `off` decide for every
 * endpoint. `max_bytes` caps each of the two bodies of one call; a cut body says so.
 */
export const CaptureConfig = z.strictObject({
  payloads: z.enum(["auto", "on", "off"]).default("auto"),
  max_bytes: z
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(256 * 1024),
});
export type CaptureConfig = z.output<typeof CaptureConfig>;

/** One call's captured request and response, as a store hands it back (decompressed). */
export interface CallPayloadRecord {
  session_id: string;
  /** The usage row's metric key: a call is opened by the key of its usage row. */
  metric_key: string;
  turn_index: number;
  round_index: number;
  agent: AgentRole;
  /** The JSON text of the request body, exactly as sent (up to the cap). */
  request_body: string;
  /** The stream as received, decoded as UTF-8 (up to the cap). */
  response_body: string;
  /** The full sizes in bytes, before any cut. */
  request_bytes: number;
  response_bytes: number;
  request_truncated: boolean;
  response_truncated: boolean;
  /** Bytes the two bodies take in storage, compressed. */
  stored_bytes: number;
  created_at: string;
}
