import { isIP } from "node:net";
import type { CaptureConfig } from "../domain/call-capture.js";
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

/** True when the URL's host is this machine by address or by the name `localhost`. */
export function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  if (isIP(host) === 6) {
    if (host === "::1") return true;
    // An IPv4-mapped loopback address (::ffff:127.0.0.1, which URL writes as ::ffff:7f00:1).
    const mapped = /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.exec(host);
    return mapped !== null;
  }
  return false;
}
