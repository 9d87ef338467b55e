import { type Fields, isCommonChunk, isObject } from "./chunk-schema.js";

/**
 * Nearly every chunk of a stream is the text of the chunk before it with one string changed: the
 * delta's content (or its reasoning, or a tool call's arguments), and in OpenAI's streams also
 * the random `obfuscation` padding. JSON.parse of each ~180-byte chunk was the largest single
 * cost of decoding a long stream (about 1.5 µs a chunk inside the gateway on the lab's 2-core
 * machine, as much as the rest of the decoding together).
 *
 * A template is a chunk already parsed, with those strings cut out of its text. A later chunk whose
 * text is the template's fixed text around strings holding no `"`, `\` or control character is
 * exactly the template's value with those strings in place: JSON ends such a string at its next
 * `"`, and without an escape its characters are its value. Anything else (another envelope, an
 * escape in the text, a finish reason) is parsed as before.
 *
 * Only chunks whose whole effect on the decoder is the one string become templates: one choice
 * at index 0, no finish reason, no usage, error or llama.cpp timings, and a delta holding a role
 * and one varying string, the others absent or null: content, reasoning_content or reasoning, or
 * the `arguments` of a tool-call list of one call (a call's later deltas).
 */

const SLOTS: ReadonlySet<string> = new Set(["content", "reasoning_content", "reasoning"]);
/**
 * What no cut-out string may hold as it is in the text: a backslash starts an escape (its value is
 * not its text) and JSON forbids raw control characters. A `"` cannot be inside: it ends the string.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for
const ESCAPED_OR_CONTROL = /[\\\u0000-\u001f]/;
// Put in place of the cut-out strings to check, by parsing once, that they are the ones meant.
const DELTA_PROBE = "agent-lab\u00a0delta\u00a0probe";
const PADDING_PROBE = "agent-lab\u00a0padding\u00a0probe";
/**
 * The trial parses one template may cost: the cuts tried are the first string values of the slot's
 * key (and of the padding's). A chunk repeats a key only in odd cases, and a slot behind repeats
 * is simply parsed; the bound keeps such a stream from paying many trial parses per chunk.
 */
const MAX_TRIALS = 2;

interface Shape {
  delta: Fields;
  /**
   * The JSON key of the string that varies from chunk to chunk: a delta field, or `arguments`
   * inside the delta's one tool call.
   */
  key: string;
  /** That string in this chunk. */
  value: string;
}

/** The delta and its varying string, when `value` is a chunk a template can be made of. */
function shapeOf(value: unknown): Shape | null {
  if (!isCommonChunk(value) || (value as Fields).timings !== undefined) return null;
  const choice = value.choices?.[0];
  if (choice === undefined || (choice.index ?? 0) !== 0) return null;
  if (choice.finish_reason !== null && choice.finish_reason !== undefined) return null;
  const delta = choice.delta as unknown;
  if (!isObject(delta)) return null;
  let shape: Shape | null = null;
  for (const key of Object.keys(delta)) {
    if (key === "role") continue;
    const field = delta[key];
    if (field === null && SLOTS.has(key)) continue;
    if (shape !== null) return null;
    if (key === "tool_calls") {
      const argumentsDelta = onlyArguments(field);
      if (argumentsDelta === null) return null;
      shape = { delta, key: "arguments", value: argumentsDelta };
    } else if (SLOTS.has(key) && typeof field === "string") {
      shape = { delta, key, value: field };
    } else {
      return null;
    }
  }
  return shape;
}

/** The arguments string of a tool-call list holding one call (a later delta of a call), if any. */
function onlyArguments(calls: unknown): string | null {
  if (!Array.isArray(calls) || calls.length !== 1) return null;
  const call: unknown = calls[0];
  if (!isObject(call) || !isObject(call.function)) return null;
  const argumentsDelta = call.function.arguments;
  return typeof argumentsDelta === "string" ? argumentsDelta : null;
}

/** Start (after the opening quote) and end (the closing quote) of each string value of `key`. */
function stringsOf(text: string, key: string): [number, number][] {
  const found: [number, number][] = [];
  const name = `"${key}"`;
  for (
    let at = text.indexOf(name);
    at !== -1 && found.length < MAX_TRIALS;
    at = text.indexOf(name, at + 1)
  ) {
    let index = at + name.length;
    while (isSpace(text.charCodeAt(index))) index++;
    if (text.charCodeAt(index++) !== COLON) continue;
    while (isSpace(text.charCodeAt(index))) index++;
    if (text.charCodeAt(index) !== QUOTE) continue;
    const start = index + 1;
    let end = start;
    while (end < text.length && text.charCodeAt(end) !== QUOTE) {
      end += text.charCodeAt(end) === BACKSLASH ? 2 : 1;
    }
    if (end < text.length) found.push([start, end]);
  }
  return found;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const isSpace = (code: number) => code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;

export class ChunkTemplate {
  /** The text around the cut-out strings, each but the last ending with an opening quote. */
  readonly #fixed: readonly string[];
  /** Which cut-out string is the delta's slot. */
  readonly #slotAt: number;
  readonly #deltaWith: (slot: string) => Fields;

  private constructor(
    /** The chunk the template was made of, as parsed (its id, model and fingerprint hold). */
    readonly value: Fields,
    shape: Shape,
    fixed: string[],
    slotAt: number,
  ) {
    this.#deltaWith = deltaMaker(shape);
    this.#fixed = fixed;
    this.#slotAt = slotAt;
  }

  /**
   * A template of `text`, whose parse is `value`; null when it cannot be one (nothing was tried),
   * "failed" when trial parses were spent without finding its cuts.
   */
  static of(text: string, value: unknown): ChunkTemplate | "failed" | null {
    const shape = shapeOf(value);
    if (shape === null) return null;
    const fields = value as Fields;
    const padded = typeof fields.obfuscation === "string";
    if (shape.value === DELTA_PROBE || fields.obfuscation === PADDING_PROBE) return null;
    const paddings = padded ? stringsOf(text, "obfuscation") : [null];
    let trials = 0;
    for (const slotString of stringsOf(text, shape.key)) {
      for (const padding of paddings) {
        if (trials++ === MAX_TRIALS) return "failed";
        const cuts = padding === null ? [slotString] : [slotString, padding];
        cuts.sort((left, right) => left[0] - right[0]);
        const fixed: string[] = [];
        let from = 0;
        for (const [start, end] of cuts) {
          fixed.push(text.slice(from, start));
          from = end;
        }
        fixed.push(text.slice(from));
        const slotAt = cuts.indexOf(slotString);
        const probes = cuts.map((cut) => (cut === slotString ? DELTA_PROBE : PADDING_PROBE));
        if (confirms(fixed, probes, shape)) {
          return new ChunkTemplate(fields, shape, fixed, slotAt);
        }
      }
    }
    return trials === 0 ? null : "failed";
  }

  /**
   * The delta of `text` when it is this template's chunk with other strings cut in: a copy of the
   * template's delta with the slot's new value, what JSON.parse would give. "escaped" when the
   * text begins as the template's, up to a string holding an escape (most likely the template
   * still fits the stream: parse this chunk and keep it; only the speed depends on that guess);
   * null when the text is not the template's.
   */
  match(text: string): Fields | "escaped" | null {
    const fixed = this.#fixed;
    const last = fixed.length - 1;
    let at = 0;
    let slot = "";
    for (let index = 0; index < last; index++) {
      const piece = fixed[index] as string;
      // A slice compared is a memory compare; startsWith walks the characters.
      const start = at + piece.length;
      if (text.slice(at, start) !== piece) return null;
      const end = text.indexOf('"', start);
      if (end === -1) return null;
      const cut = text.slice(start, end);
      if (ESCAPED_OR_CONTROL.test(cut)) return "escaped";
      if (index === this.#slotAt) slot = cut;
      at = end;
    }
    if (text.length - at !== (fixed[last] as string).length || text.slice(at) !== fixed[last]) {
      return null;
    }
    return this.#deltaWith(slot);
  }
}

/**
 * Makes the delta for a slot's value, as JSON.parse would build it: the same keys in the same
 * order. The usual deltas get an object literal of their own, cheaper than a copy of the
 * template's delta with a computed key (a quarter of a chunk's reading when measured).
 */
function deltaMaker(shape: Shape): (slot: string) => Fields {
  const { delta, key } = shape;
  const keys = Object.keys(delta);
  if (key === "arguments") {
    const calls = delta.tool_calls as Fields[];
    const call = calls[0] as Fields;
    const fn = call.function as Fields;
    if (keys.length === 1 && Object.keys(fn).length === 1) {
      const callKeys = Object.keys(call);
      if (callKeys.length === 2 && callKeys[0] === "index" && callKeys[1] === "function") {
        const { index } = call;
        return (value) => ({ tool_calls: [{ index, function: { arguments: value } }] });
      }
    }
    return (value) => ({
      ...delta,
      tool_calls: [{ ...call, function: { ...fn, arguments: value } }],
    });
  }
  if (keys.length === 1) {
    if (key === "content") return (content) => ({ content });
    if (key === "reasoning_content") return (reasoning_content) => ({ reasoning_content });
    if (key === "reasoning") return (reasoning) => ({ reasoning });
  }
  if (keys.length === 2 && keys[0] === "role" && key === "content") {
    const { role } = delta;
    return (content) => ({ role, content });
  }
  return (value) => ({ ...delta, [key]: value });
}

/**
 * True when the text with the probes in place of the cut-out strings parses to a template chunk
 * whose slot (and padding) are the probes: the cuts are those strings, and no others.
 */
function confirms(fixed: string[], probes: string[], expected: Shape): boolean {
  let text = fixed[0] as string;
  for (let index = 0; index < probes.length; index++) {
    text += `${probes[index]}${fixed[index + 1]}`;
  }
  let probe: unknown;
  try {
    probe = JSON.parse(text);
  } catch {
    return false;
  }
  const shape = shapeOf(probe);
  if (shape === null || shape.key !== expected.key || shape.value !== DELTA_PROBE) return false;
  return !probes.includes(PADDING_PROBE) || (probe as Fields).obfuscation === PADDING_PROBE;
}
