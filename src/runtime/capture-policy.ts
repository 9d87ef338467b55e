import type { CaptureConfig } from "../domain/call-capture.js";
import { isLoopbackUrl } from "../domain/loopback-url.js";
import type { ChatModel } from "../providers/chat-model.js";

/**
 * Whether one agent's calls keep their request body and raw stream. `auto` keeps them where
 * nothing leaves the machine: the simulated model, and an endpoint whose `base_url` host is a
 * loopback address (127.0.0.0/8, ::1, localhost). A hosted endpoint's traffic is the user's data
 * at someone else's service, so keeping it is asked for with `on`.
 *
 * The model's resolved `baseUrl` is read, not the config's `base_url`: an endpoint taken from
 * `$OPENAI_BASE_URL` is judged by where the calls really go.
 */
export function capturesPayloads(
  capture: CaptureConfig,
  model: Pick<ChatModel, "simulated" | "baseUrl">,
): boolean {
  if (capture.payloads !== "auto") return capture.payloads === "on";
  if (model.simulated) return true;
  return model.baseUrl !== undefined && isLoopbackUrl(model.baseUrl);
}
