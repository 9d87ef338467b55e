import { isDeepStrictEqual } from "node:util";
import { InvalidInputError } from "../domain/errors.js";
import { LabSessionConfig } from "../domain/session-config.js";

/** How a derived session came to be: stored in its config as `derived_from`. */
export interface DerivedFrom {
  kind: "fork" | "replay";
  session_id: string;
  /** The last turn copied from the source (0 for a replay: it copies none). */
  turn_index: number;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * JSON Merge Patch (RFC 7396): objects merge key by key, `null` removes a key, anything else
 * (arrays included) replaces. So `{chat_agent: {system_prompt: "…"}}` keeps the source's model.
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return patch;
  const merged: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = mergePatch(merged[key], value);
  }
  return merged;
}

const ENDPOINT_KEYS = ["model", "base_url", "api_key_env"] as const;

function endpointOf(agent: unknown): Record<string, unknown> {
  const record = isRecord(agent) ? agent : {};
  return Object.fromEntries(ENDPOINT_KEYS.map((key) => [key, record[key]]));
}

/**
 * The config of a session derived from `source`: the overrides merged over it, the event agent
 * following a changed chat agent when it followed it in the source (as `run --model` does), the
 * source's experiment tag dropped (a fork is not one of the experiment's runs), `derived_from` and
 * the kind's tag added. Validated like a new session's config; refusals name the field after
 * `field_prefix` (e.g. `request body: config.`).
 */
export function derivedConfig(
  source: Record<string, unknown>,
  overrides: Record<string, unknown> | undefined,
  derived_from: DerivedFrom,
  field_prefix: string,
): LabSessionConfig {
  const patch = overrides ?? {};
  const merged = mergePatch(source, patch) as Record<string, unknown>;
  const chatPatch = patch.chat_agent;
  const chatEndpointChanged = isRecord(chatPatch) && ENDPOINT_KEYS.some((key) => key in chatPatch);
  if (
    chatEndpointChanged &&
    patch.event_agent === undefined &&
    isDeepStrictEqual(endpointOf(source.chat_agent), endpointOf(source.event_agent))
  ) {
    const endpoint = Object.fromEntries(
      Object.entries(endpointOf(merged.chat_agent)).filter(([, value]) => value !== undefined),
    );
    const event = isRecord(merged.event_agent) ? merged.event_agent : {};
    const rest = Object.fromEntries(
      Object.entries(event).filter(([key]) => !(ENDPOINT_KEYS as readonly string[]).includes(key)),
    );
    merged.event_agent = { ...rest, ...endpoint };
  }
  if (patch.experiment === undefined) delete merged.experiment;
  const tags = Array.isArray(merged.tags) ? merged.tags : [];
  merged.tags = tags.includes(derived_from.kind) ? tags : [...tags, derived_from.kind];
  merged.derived_from = derived_from;
  const parsed = LabSessionConfig.safeParse(merged);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map(
    (issue) => `${field_prefix}${issue.path.map(String).join(".")}: ${issue.message}`,
  );
  throw new InvalidInputError(problems.join("; "));
}
