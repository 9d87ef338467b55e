/**
 * Splits a `<think>…</think>` block at the start of a model's content (Qwen, DeepSeek-R1 distills
 * and others served without a reasoning parser) from the answer that follows. Tags may be split
 * across chunks, even mid-tag. Text is held back only while the content so far could still be the
 * start of `<think>` (or, inside the block, of `</think>`), so an ordinary answer is not delayed
 * past its first characters; once the start is decided, content passes straight through.
 */

const OPEN = "<think>";
const CLOSE = "</think>";

type State = "start" | "thinking" | "after" | "answer";

export interface SplitText {
  reasoning: string;
  text: string;
}

const NOTHING: SplitText = { reasoning: "", text: "" };

export class ThinkTagSplitter {
  #state: State = "start";
  /** At the start: content that may still become `<think>`. Inside: a possible `</think>` prefix. */
  #held = "";

  /** The content delta's reasoning and answer parts (either may be empty). */
  push(content: string): SplitText {
    if (this.#state === "answer") return { reasoning: "", text: content };
    if (content.length === 0) return NOTHING;
    if (this.#state === "start") return this.#atStart(content);
    if (this.#state === "thinking") return this.#inside(content);
    return this.#after(content);
  }

  /** At the stream's end: what was held back. An unclosed block is reasoning all the same. */
  end(): SplitText {
    const held = this.#held;
    this.#held = "";
    if (this.#state === "start") {
      this.#state = "answer";
      return { reasoning: "", text: held };
    }
    return this.#state === "thinking" ? { reasoning: held, text: "" } : NOTHING;
  }

  #atStart(content: string): SplitText {
    const sofar = this.#held + content;
    // Leading whitespace before the tag is allowed (and dropped with it).
    const trimmed = sofar.trimStart();
    if (trimmed.length < OPEN.length && OPEN.startsWith(trimmed)) {
      this.#held = sofar;
      return NOTHING;
    }
    this.#held = "";
    if (!trimmed.startsWith(OPEN)) {
      this.#state = "answer";
      return { reasoning: "", text: sofar };
    }
    this.#state = "thinking";
    return this.#inside(trimmed.slice(OPEN.length));
  }

  #inside(content: string): SplitText {
    const sofar = this.#held + content;
    const close = sofar.indexOf(CLOSE);
    if (close !== -1) {
      this.#held = "";
      this.#state = "after";
      const rest = this.#after(sofar.slice(close + CLOSE.length));
      return { reasoning: sofar.slice(0, close), text: rest.text };
    }
    const keep = partialSuffix(sofar, CLOSE);
    this.#held = sofar.slice(sofar.length - keep);
    return { reasoning: sofar.slice(0, sofar.length - keep), text: "" };
  }

  /** After `</think>`: the answer starts at its first non-whitespace character. */
  #after(content: string): SplitText {
    const text = content.trimStart();
    if (text.length === 0) return NOTHING;
    this.#state = "answer";
    return { reasoning: "", text };
  }
}

/** The length of the longest suffix of `text` that is a proper prefix of `tag`. */
function partialSuffix(text: string, tag: string): number {
  for (let length = Math.min(tag.length - 1, text.length); length > 0; length--) {
    if (text.endsWith(tag.slice(0, length))) return length;
  }
  return 0;
}
