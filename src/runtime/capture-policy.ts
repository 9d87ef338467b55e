import { isIP } from "node:net";
import type { CaptureConfig } from "../domain/call-capture.js";
import type { AgentConfig } from "../domain/session-config.js";

/**
 * Whether one agent's calls keep their request body and raw stream. `auto` keeps them where
 * nothing leaves the machine: the simulated model, and an endpoint whose `base_url` host is a
 * loopback address (127.0.0.0/8, ::1, localhost). A hosted endpoint's traffic is the user's data
 * at someone else's service, so keeping it is asked for with `on`.
 *
 * Only the config's own `base_url` is read: an endpoint taken from `$OPENAI_BASE_URL` counts as
 * remote under `auto` (the runtime never sees the environment).
 */
export function capturesPayloads(
  capture: CaptureConfig,
  agent: Pick<AgentConfig, "model" | "base_url">,
): boolean {
  if (capture.payloads !== "auto") return capture.payloads === "on";
  if (agent.model === "sim" || agent.model.startsWith("sim:")) return true;
  return agent.base_url !== undefined && isLoopbackUrl(agent.base_url);
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
