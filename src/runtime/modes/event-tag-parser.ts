/**
 * Lifts `<event name="NAME">{json arguments}</event>` tags (see domain/event-protocol.ts) out of a
 * chat agent's streamed text, incrementally.
 *
 * Grammar of an opening tag (case-sensitive; whitespace is space, tab, CR or LF):
 *
 *   "<event" WS+ "name" WS* "=" WS* ( '"' VALUE '"' | "'" VALUE "'" ) WS* ">"
 *
 * where VALUE is non-empty and holds no `<`, CR or LF, and the whole tag is at most
 * MAX_OPENING_TAG_LENGTH characters. Anything else that starts like `<event` is plain text. Inside
 * a tag only the exact `</event>` closes it; a `<` in the arguments is fine.
 *
 * Every character is looked at a bounded number of times (text without `<` is skipped with
 * `indexOf`), so the work is linear in the length of the stream however it is split. The only
 * text held back is a suffix that could still become an opening tag (at most
 * MAX_OPENING_TAG_LENGTH characters) or the inside of an opened tag.
 */

export type ParsedPiece =
  /** User-visible text, tags removed. */
  | { type: "text"; text: string }
  /** `complete` is false only from `end()`, for a tag cut off by the end of the stream. */
  | { type: "event"; name: string; raw_arguments: string; complete: boolean };

/** An opening tag longer than this is not a tag; it bounds the text held back while it grows. */
export const MAX_OPENING_TAG_LENGTH = 256;

const OPEN_KEYWORD = "<event";
const NAME_KEYWORD = "name";
const CLOSE_TAG = "</event>";

const isWhitespace = (char: string) =>
  char === " " || char === "\t" || char === "\n" || char === "\r";

const ENTITIES: Record<string, string> = {
  "&quot;": '"',
  "&amp;": "&",
  "&apos;": "'",
  "&#39;": "'",
  "&lt;": "<",
  "&gt;": ">",
};

/** One pass, so `&amp;quot;` becomes `&quot;` (the inverse of formatEventTag's escaping). */
const unescapeAttribute = (value: string) =>
  value.replace(/&(?:quot|amp|apos|#39|lt|gt);/g, (entity) => ENTITIES[entity] ?? entity);

type OpeningStep =
  | "open_keyword"
  | "space_after_keyword"
  | "space_before_name"
  | "name_keyword"
  | "before_equals"
  | "before_value"
  | "value"
  | "after_value";

type OpeningOutcome = "more" | "accept" | "reject";

/** Character-at-a-time recognizer of one opening tag, started on its `<`. */
class OpeningTagMatcher {
  /** The characters accepted so far; they become text if the tag is rejected. */
  raw = "<";
  value = "";
  private step: OpeningStep = "open_keyword";
  private keywordIndex = 1;
  private quote = "";

  /** On "reject" the matcher is spent: `raw` (without `char`) is text and `char` is read again. */
  feed(char: string): OpeningOutcome {
    const outcome = this.advance(char);
    if (outcome === "reject") return "reject";
    // A tag that could only close past the limit is text now, not some characters later.
    if (outcome === "more" && this.raw.length + 1 + this.shortestRest() > MAX_OPENING_TAG_LENGTH) {
      return "reject";
    }
    this.raw += char;
    return outcome;
  }

  /** The length of the shortest text that completes the tag from here: `<event name="x">`. */
  private shortestRest(): number {
    switch (this.step) {
      case "open_keyword":
        return OPEN_KEYWORD.length - this.keywordIndex + ' name="x">'.length;
      case "space_after_keyword":
        return ' name="x">'.length;
      case "space_before_name":
        return 'name="x">'.length;
      case "name_keyword":
        return NAME_KEYWORD.length - this.keywordIndex + '="x">'.length;
      case "before_equals":
        return '="x">'.length;
      case "before_value":
        return '"x">'.length;
      case "value":
        return this.value === "" ? 'x">'.length : '">'.length;
      case "after_value":
        return ">".length;
    }
  }

  private advance(char: string): OpeningOutcome {
    switch (this.step) {
      case "open_keyword":
        if (char !== OPEN_KEYWORD[this.keywordIndex]) return "reject";
        this.keywordIndex += 1;
        if (this.keywordIndex === OPEN_KEYWORD.length) this.step = "space_after_keyword";
        return "more";
      case "space_after_keyword":
        if (!isWhitespace(char)) return "reject";
        this.step = "space_before_name";
        return "more";
      case "space_before_name":
        if (isWhitespace(char)) return "more";
        if (char !== NAME_KEYWORD[0]) return "reject";
        this.step = "name_keyword";
        this.keywordIndex = 1;
        return "more";
      case "name_keyword":
        if (char !== NAME_KEYWORD[this.keywordIndex]) return "reject";
        this.keywordIndex += 1;
        if (this.keywordIndex === NAME_KEYWORD.length) this.step = "before_equals";
        return "more";
      case "before_equals":
        if (isWhitespace(char)) return "more";
        if (char !== "=") return "reject";
        this.step = "before_value";
        return "more";
      case "before_value":
        if (isWhitespace(char)) return "more";
        if (char !== '"' && char !== "'") return "reject";
        this.quote = char;
        this.step = "value";
        return "more";
      case "value":
        if (char === this.quote) {
          if (this.value === "") return "reject";
          this.step = "after_value";
          return "more";
        }
        if (char === "<" || char === "\n" || char === "\r") return "reject";
        this.value += char;
        return "more";
      case "after_value":
        if (isWhitespace(char)) return "more";
        return char === ">" ? "accept" : "reject";
    }
  }
}

interface OpenedTag {
  name: string;
  /** What arrived after the opening tag, including the closing tag once it arrives. */
  chunks: string[];
  /** How many characters of `</event>` the arguments currently end with. */
  closeMatched: number;
}

export class EventTagParser {
  private opening: OpeningTagMatcher | null = null;
  private opened: OpenedTag | null = null;

  /**
   * Feeds the next streamed text delta; returns the pieces it completed, in order. An event is
   * returned the moment its closing `</event>` arrives. Text is released as early as possible:
   * only a suffix that could still be the start of a tag is held back.
   */
  push(delta: string): ParsedPiece[] {
    const pieces: ParsedPiece[] = [];
    let text = "";
    const flushText = () => {
      if (text !== "") pieces.push({ type: "text", text });
      text = "";
    };
    let index = 0;
    while (index < delta.length) {
      if (this.opened) {
        index = this.scanArguments(this.opened, delta, index, pieces);
        continue;
      }
      const matcher = this.opening;
      if (matcher) {
        const outcome = matcher.feed(delta[index] as string);
        if (outcome === "reject") {
          // The rejected character holds no tag start unless it is `<`: reread it as text.
          text += matcher.raw;
          this.opening = null;
          continue;
        }
        index += 1;
        if (outcome === "accept") {
          flushText();
          this.opening = null;
          this.opened = { name: unescapeAttribute(matcher.value), chunks: [], closeMatched: 0 };
        }
        continue;
      }
      const tagStart = delta.indexOf("<", index);
      if (tagStart === -1) {
        text += delta.slice(index);
        index = delta.length;
      } else {
        text += delta.slice(index, tagStart);
        this.opening = new OpeningTagMatcher();
        index = tagStart + 1;
      }
    }
    flushText();
    return pieces;
  }

  /**
   * The stream ended: flushes held-back text; an opened but unclosed tag becomes an event with
   * `complete: false` and the arguments that arrived; a partial tag that never opened is text.
   * The parser is then ready for a new stream.
   */
  end(): ParsedPiece[] {
    const pieces: ParsedPiece[] = [];
    if (this.opening) pieces.push({ type: "text", text: this.opening.raw });
    if (this.opened) {
      pieces.push({
        type: "event",
        name: this.opened.name,
        raw_arguments: this.opened.chunks.join("").trim(),
        complete: false,
      });
    }
    this.opening = null;
    this.opened = null;
    return pieces;
  }

  /** Consumes arguments from `start`; returns where it stopped (after `</event>`, or the end). */
  private scanArguments(
    opened: OpenedTag,
    delta: string,
    start: number,
    pieces: ParsedPiece[],
  ): number {
    let index = start;
    while (index < delta.length) {
      if (opened.closeMatched === 0) {
        const candidate = delta.indexOf("<", index);
        if (candidate === -1) break;
        index = candidate;
      }
      const char = delta[index] as string;
      index += 1;
      if (char === CLOSE_TAG[opened.closeMatched]) opened.closeMatched += 1;
      else opened.closeMatched = char === "<" ? 1 : 0; // `<` occurs in CLOSE_TAG only at its start
      if (opened.closeMatched === CLOSE_TAG.length) {
        opened.chunks.push(delta.slice(start, index));
        const inside = opened.chunks.join("").slice(0, -CLOSE_TAG.length);
        pieces.push({
          type: "event",
          name: opened.name,
          raw_arguments: inside.trim(),
          complete: true,
        });
        this.opened = null;
        return index;
      }
    }
    if (start < delta.length) opened.chunks.push(delta.slice(start));
    return delta.length;
  }
}
