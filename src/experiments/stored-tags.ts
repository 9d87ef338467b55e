import { z } from "zod";
import { ExperimentTag, Price } from "../domain/experiment.js";
import type { ScoringSession } from "../store/experiment-records.js";

/**
 * A run's experiment tag and chat model, read from the config parts a report reads
 * (ScoringSession). The runs of one cell and scenario carry the same tag but for their repetition
 * and run key, so each distinct rest is parsed and validated once, not once a run: the tag is
 * valid exactly when ExperimentTag would take it whole.
 */

export interface StoredTag {
  /**
   * The tag but for its repetition and run key, shared by the runs of one cell and scenario (not
   * copied for each run: a report reads tens of thousands).
   */
  tag: SharedTag;
  repetition: number;
  run_key: string;
  /** The chat agent's model ("sim" when the config names none). */
  chat_model: string;
  /** The suite's prices the tag carries (none when malformed). */
  prices: Record<string, Price>;
}

const SharedTag = ExperimentTag.omit({ repetition: true, run_key: true });
export type SharedTag = z.output<typeof SharedTag>;
const Repetition = ExperimentTag.shape.repetition;
const RunKey = ExperimentTag.shape.run_key;
const PriceTable = z.record(z.string(), Price);

/** The suite's prices, as the runner copies them into each tag (none when malformed). */
function pricesOfTag(prices: unknown): Record<string, Price> {
  const parsed = PriceTable.safeParse(prices);
  return parsed.success ? parsed.data : {};
}

/** The chat agent's `model` (absent when the agent is no object), or the simulated one. */
function chatModelOf(model: unknown): string {
  return typeof model === "string" && model.length > 0 ? model : "sim";
}

// What the schemas certainly take (the common case, checked without them); the rest is theirs.
const isRepetition = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 1;
const isRunKey = (value: unknown): value is string => typeof value === "string" && value !== "";

function valid<Value>(
  schema: z.ZodType<Value>,
  value: unknown,
  surely: (value: unknown) => value is Value,
): Value | undefined {
  if (surely(value)) return value;
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/** A JSON text's value, or undefined when there is none or it does not parse. */
function jsonValue(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export class TagReader {
  readonly #shared = new Map<string, { tag: SharedTag; prices: Record<string, Price> } | null>();
  readonly #models = new Map<string | null, string>();

  /** The session's tag and what goes with it, or null when it has none or a malformed one. */
  read(session: ScoringSession): StoredTag | null {
    if (session.tag_json === null) return null;
    let shared = this.#shared.get(session.tag_json);
    if (shared === undefined) {
      const parsed = SharedTag.safeParse(jsonValue(session.tag_json));
      shared = parsed.success
        ? { tag: parsed.data, prices: pricesOfTag(parsed.data.prices) }
        : null;
      this.#shared.set(session.tag_json, shared);
    }
    if (shared === null) return null;
    const repetition = valid(Repetition, jsonValue(session.repetition_json), isRepetition);
    const runKey = valid(RunKey, jsonValue(session.run_key_json), isRunKey);
    if (repetition === undefined || runKey === undefined) return null;
    let model = this.#models.get(session.chat_model_json);
    if (model === undefined) {
      model = chatModelOf(jsonValue(session.chat_model_json));
      this.#models.set(session.chat_model_json, model);
    }
    return {
      tag: shared.tag,
      repetition,
      run_key: runKey,
      chat_model: model,
      prices: shared.prices,
    };
  }
}
