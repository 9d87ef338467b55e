import { type Fields, isCommonChunk, isObject } from "./chunk-schema.js";

/**
 * Nearly every chunk of a stream is the text of the chunk before it with one string changed: the
 * delta's content (or its reasoning), plus, in OpenAI's streams, the random `obfuscation` padding.
 * JSON.parse of each ~180-byte chunk was the largest single cost of decoding a long stream (about
 * 1.5 µs a chunk on the lab's 2-core machine, as much as the rest of the decoding together).
 *
 * A template is a chunk already parsed, with those strings cut out of its text. A later chunk whose
 * text is the template's fixed text around strings holding no `"`, `\` or control character is
 * exactly the template's value with those strings in place: JSON ends such a string at its next
 * `"`, and without an escape its characters are its value. Anything else (another envelope, an
 * escape in the text, a finish reason) is parsed as before.
 *
 * Only chunks whose whole effect on the decoder is the one string become templates: one choice
 * at index 0, no finish reason, no usage, error or llama.cpp timings, and a delta holding a role
 * and one of content, reasoning_content or reasoning as a string, the others absent or null.
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
/** Where a key's occurrences are looked for; a chunk repeats a key only in odd cases. */
const MAX_OCCURRENCES = 4;

interface Shape {
  delta: Fields;
  /** The delta's field that varies from chunk to chunk. */
  slot: string;
}

/** The delta and its varying field, when `value` is a chunk a template can be made of. */
function shapeOf(value: unknown): Shape | null {
  if (!isCommonChunk(value) || (value as Fields).timings !== undefined) return null;
  const choice = value.choices?.[0];
  if (choice === undefined || (choice.index ?? 0) !== 0) return null;
  if (choice.finish_reason !== null && choice.finish_reason !== undefined) return null;
  const delta = choice.delta as unknown;
  if (!isObject(delta)) return null;
  let slot: string | null = null;
  for (const key of Object.keys(delta)) {
    if (key === "role") continue;
    if (!SLOTS.has(key)) return null;
    const field = delta[key];
    if (field === null) continue;
    if (typeof field !== "string" || slot !== null) return null;
    slot = key;
  }
  return slot === null ? null : { delta, slot };
}

/** Start (after the opening quote) and end (the closing quote) of each string value of `key`. */
function stringsOf(text: string, key: string): [number, number][] {
  const found: [number, number][] = [];
  const name = `"${key}"`;
  for (
    let at = text.indexOf(name);
    at !== -1 && found.length < MAX_OCCURRENCES;
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

  /** A template of `text`, whose parse is `value`, or null when it cannot be one. */
  static of(text: string, value: unknown): ChunkTemplate | null {
    const shape = shapeOf(value);
    if (shape === null) return null;
    const fields = value as Fields;
    const padded = typeof fields.obfuscation === "string";
    if (shape.delta[shape.slot] === DELTA_PROBE || fields.obfuscation === PADDING_PROBE) {
      return null;
    }
    const paddings = padded ? stringsOf(text, "obfuscation") : [null];
    for (const slotString of stringsOf(text, shape.slot)) {
      for (const padding of paddings) {
        const cuts = padding === null ? [slotString] : [slotString, padding];
        if (padding !== null && padding[0] === slotString[0]) continue;
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
        if (!confirms(fixed, probes, shape.slot, padded)) continue;
        return new ChunkTemplate(fields, shape, fixed, slotAt);
      }
    }
    return null;
  }

  /**
   * The delta of `text` when it is this template's chunk with other strings cut in: a copy of the
   * template's delta with the slot's new value, what JSON.parse would give. "escaped" when the
   * text begins as the template's but a string in it holds an escape (the template still fits
   * the stream: parse this chunk, keep it); null when the text is not the template's.
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
  const keys = Object.keys(shape.delta);
  if (keys.length === 1) {
    if (shape.slot === "content") return (content) => ({ content });
    if (shape.slot === "reasoning_content") return (reasoning_content) => ({ reasoning_content });
    if (shape.slot === "reasoning") return (reasoning) => ({ reasoning });
  }
  if (keys.length === 2 && keys[0] === "role" && shape.slot === "content") {
    const { role } = shape.delta;
    return (content) => ({ role, content });
  }
  const { delta, slot: name } = shape;
  return (value) => ({ ...delta, [name]: value });
}

/**
 * True when the text with the probes in place of the cut-out strings parses to a template chunk
 * whose slot (and padding) are the probes: the cuts are those strings, and no others.
 */
function confirms(fixed: string[], probes: string[], slot: string, padded: boolean): boolean {
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
  if (shape === null || shape.slot !== slot || shape.delta[slot] !== DELTA_PROBE) return false;
  return !padded || (probe as Fields).obfuscation === PADDING_PROBE;
}
