/**
 * Gateway sessions (issue 14): sessions recorded through the OpenAI-compatible gateway (`/v1`)
 * carry `gateway` in their config (src/domain/gateway.ts, GatewaySessionMark) and the tag
 * `gateway`. The UI marks them; it reads the mark leniently, since a config is whatever was
 * stored (an import, an older build) and a malformed mark must not break the page.
 */

/** GATEWAY_TAG of src/domain/gateway.ts (the UI imports only types from src/domain). */
export const GATEWAY_TAG = "gateway";

export interface GatewayMark {
  requested_model: string;
  upstream: string | null;
  grouped_by: "header" | "conversation" | null;
}

/** The session config's `gateway` mark, or null when it has none (or none that can be read). */
export function gatewayMarkOf(config: Record<string, unknown>): GatewayMark | null {
  const mark = config.gateway;
  if (mark === null || typeof mark !== "object" || Array.isArray(mark)) return null;
  const { requested_model, upstream, grouped_by } = mark as Record<string, unknown>;
  if (typeof requested_model !== "string") return null;
  return {
    requested_model,
    upstream: typeof upstream === "string" ? upstream : null,
    grouped_by: grouped_by === "header" || grouped_by === "conversation" ? grouped_by : null,
  };
}

/** A list row knows its tags, not its config: the tag says it came through the gateway. */
export function isGatewaySession(tags: readonly string[]): boolean {
  return tags.includes(GATEWAY_TAG);
}

/** A stored config is a gateway session's: it has the mark, or (a mark unreadable here) the tag. */
export function isGatewayConfig(config: Record<string, unknown>): boolean {
  if (gatewayMarkOf(config) !== null) return true;
  const tags = config.tags;
  return Array.isArray(tags) && tags.includes(GATEWAY_TAG);
}

const GROUPED_BY: Record<NonNullable<GatewayMark["grouped_by"]>, string> = {
  header: "named by the X-Agent-Lab-Session header",
  conversation: "grouped by conversation",
};

/** One line for the badge's tooltip and the header's subtitle. */
export function gatewayDescription(mark: GatewayMark | null): string {
  if (mark === null)
    return "Recorded through the gateway (/v1): an agent of its own called the lab";
  const target =
    mark.upstream === null
      ? `model ${mark.requested_model}`
      : mark.upstream === mark.requested_model
        ? `upstream ${mark.upstream}`
        : `upstream ${mark.upstream} (requested ${mark.requested_model})`;
  const grouping = mark.grouped_by === null ? "" : `; ${GROUPED_BY[mark.grouped_by]}`;
  return `Recorded through the gateway (/v1): ${target}${grouping}`;
}
