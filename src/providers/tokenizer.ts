import { createRequire } from "node:module";
import type { ChatMessage } from "../domain/messages.js";

/**
 * The o200k encoder, loaded on first use (its CommonJS build, which loads synchronously): its rank
 * tables take about 400 ms to load, which every CLI command that never counts a token (`--help`,
 * `sessions`, `export`, `show`) would otherwise pay at start.
 */
interface Encoder {
  encode(text: string): number[];
  decode(tokens: readonly number[]): string;
}
let encoder: Encoder | null = null;
function o200k(): Encoder {
  encoder ??= createRequire(import.meta.url)("gpt-tokenizer/encoding/o200k_base") as Encoder;
  return encoder;
}
/**
 * Loads the encoder now: a model that will count tokens (the sim) calls this when it is made, so
 * the load is not inside its first call's time to first token.
 */
export function loadTokenizer(): void {
  o200k();
}
const encode = (text: string): number[] => o200k().encode(text);
const decode = (tokens: readonly number[]): string => o200k().decode(tokens);

/**
 * A real BPE tokenizer (o200k_base, GPT-4o's), used where an endpoint reports no usage and by the
 * simulated model. Counts for other model families are estimates, and are labelled so.
 *
 * BPE is super-linear in the length of one pre-token, and a run without spaces is one pre-token
 * (100,000 letters took 7 s, on the event loop). So the cost per string is bounded twice:
 * - runs of more than MAX_RUN_CHARS characters without a change between space and non-space are
 *   cut every MAX_RUN_CHARS characters and encoded piece by piece (a token per cut may differ
 *   from the endpoint's count);
 * - a string longer than MAX_EXACT_CHARS is not encoded at all: its count is the byte estimate,
 *   one token per 4 UTF-8 bytes, rounded up, and callers label the usage estimated.
 * Both are linear; the worst case for an exact count (random letters) is about 2 µs a character.
 */

export const MAX_EXACT_CHARS = 16_384;
export const MAX_RUN_CHARS = 512;
/** The byte estimate's ratio: OpenAI's rule of thumb for English is ~4 characters a token. */
export const BYTES_PER_ESTIMATED_TOKEN = 4;

/** Whether `text` is counted by the byte estimate rather than by the tokenizer. */
export function isEstimatedText(text: string): boolean {
  return text.length > MAX_EXACT_CHARS;
}

/** The count for a string too long to encode: ceil(UTF-8 bytes / 4). */
export function estimateTokensFromBytes(text: string): number {
  return Math.ceil(Buffer.byteLength(text, "utf8") / BYTES_PER_ESTIMATED_TOKEN);
}

/**
 * The tokens of `text`. Past MAX_EXACT_CHARS they are stand-ins, one per 4 bytes (those bytes
 * read as a number), so their number is the byte estimate and a prefix cache can still compare
 * two prompts; they are not o200k ids and do not decode.
 */
export function tokenize(text: string): number[] {
  return [...tokensOf(text)];
}

function tokensOf(text: string): readonly number[] {
  if (text.length === 0) return [];
  const cached = TOKEN_CACHE.get(text);
  if (cached !== undefined) {
    // Refreshes its place: the sim model re-counts the same history every round.
    TOKEN_CACHE.delete(text);
    TOKEN_CACHE.set(text, cached);
    return cached;
  }
  let tokens: number[];
  if (isEstimatedText(text)) {
    tokens = standInTokens(text);
  } else {
    tokens = [];
    for (const piece of boundedPieces(text)) {
      for (const token of encode(piece)) tokens.push(token);
    }
  }
  remember(text, tokens);
  return tokens;
}

export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  return isEstimatedText(text) ? estimateTokensFromBytes(text) : tokensOf(text).length;
}

/**
 * The texts a chat prompt is made of, in order, using OpenAI's documented framing (a few tokens per
 * message for role and separators, three to prime the reply). Tool definitions come first, as
 * providers place them, so a prefix cache reuses them along with the history that follows.
 */
function promptTexts(messages: readonly ChatMessage[], toolsJson: string): string[] {
  const texts: string[] = [];
  if (toolsJson) texts.push(toolsJson);
  for (const message of messages) {
    texts.push(`<|${message.role}${message.name ? ` ${message.name}` : ""}|>`);
    // An answerless refusal is sent as the content (the openai adapter's renderMessage).
    const content = message.content || (message.role === "assistant" ? message.refusal : "");
    if (content) texts.push(content);
    for (const call of message.tool_calls) texts.push(`${call.name}(${call.raw_arguments})`);
    if (message.tool_call_id) texts.push(message.tool_call_id);
  }
  texts.push("<|assistant|>");
  return texts;
}

/**
 * The token sequence a chat prompt becomes. Returned as tokens, not a count, so a prefix cache can
 * compare two prompts.
 */
export function promptTokens(messages: readonly ChatMessage[], toolsJson = ""): number[] {
  return promptSegments(messages, toolsJson).flat();
}

/** How many tokens a chat prompt is: `promptTokens(...).length` without building the array. */
export function countPromptTokens(messages: readonly ChatMessage[], toolsJson = ""): number {
  return countSegmentTokens(promptSegments(messages, toolsJson));
}

export function countSegmentTokens(segments: readonly (readonly number[])[]): number {
  let count = 0;
  for (const segment of segments) count += segment.length;
  return count;
}

/**
 * The same tokens, one read-only array per text, shared with the tokenizer's cache: a text seen
 * before is the very same array, so a prefix cache can skip it without comparing its tokens, and
 * nothing is copied for a long history.
 */
export function promptSegments(
  messages: readonly ChatMessage[],
  toolsJson = "",
): readonly (readonly number[])[] {
  return promptTexts(messages, toolsJson).map(tokensOf);
}

/** Whether any part of the prompt is counted by the byte estimate. */
export function isEstimatedPrompt(messages: readonly ChatMessage[], toolsJson = ""): boolean {
  return promptTexts(messages, toolsJson).some(isEstimatedText);
}

/**
 * `text` cut to at most `maxTokens` tokens. Exact where the text is encoded; past the exact limit,
 * cut at the byte estimate's rate (4 bytes a token, never splitting a character).
 */
export function truncateToTokens(text: string, maxTokens: number): string {
  if (!isEstimatedText(text)) {
    // Pieces decode independently, so a prefix of the tokens is a prefix of the text.
    let kept = "";
    let left = maxTokens;
    for (const piece of boundedPieces(text)) {
      const tokens = encode(piece);
      if (tokens.length <= left) {
        kept += piece;
        left -= tokens.length;
        continue;
      }
      return kept + decodePrefix(tokens, left);
    }
    return kept;
  }
  const bytes = Buffer.from(text, "utf8").subarray(0, maxTokens * BYTES_PER_ESTIMATED_TOKEN);
  // A cut inside a character leaves a replacement character at the end; drop it.
  return bytes.toString("utf8").replace(/\uFFFD$/, "");
}

// ---- internals ----------------------------------------------------------------------------------

function decodePrefix(tokens: readonly number[], count: number): string {
  return count <= 0 ? "" : decode(tokens.slice(0, count));
}

/**
 * `text` cut so that no piece holds a run of more than MAX_RUN_CHARS characters of one kind
 * (space or non-space); text without such runs is one piece, and encodes exactly as a whole.
 */
function boundedPieces(text: string): string[] {
  const pieces: string[] = [];
  let pieceStart = 0;
  let runStart = 0;
  let runIsSpace = false;
  for (let index = 0; index < text.length; index++) {
    const isSpace = isWhitespace(text.charCodeAt(index));
    if (index === 0 || isSpace !== runIsSpace) {
      runStart = index;
      runIsSpace = isSpace;
    } else if (index - runStart >= MAX_RUN_CHARS && !isLowSurrogate(text.charCodeAt(index))) {
      pieces.push(text.slice(pieceStart, index));
      pieceStart = index;
      runStart = index;
    }
  }
  pieces.push(text.slice(pieceStart));
  return pieces;
}

function isWhitespace(code: number): boolean {
  return (
    code === 0x20 ||
    (code >= 0x09 && code <= 0x0d) ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

function standInTokens(text: string): number[] {
  const bytes = Buffer.from(text, "utf8");
  const whole = bytes.length - (bytes.length % BYTES_PER_ESTIMATED_TOKEN);
  const tokens = new Array<number>(Math.ceil(bytes.length / BYTES_PER_ESTIMATED_TOKEN));
  for (let offset = 0; offset < whole; offset += BYTES_PER_ESTIMATED_TOKEN) {
    tokens[offset / BYTES_PER_ESTIMATED_TOKEN] = bytes.readUInt32BE(offset);
  }
  if (whole < bytes.length) {
    const tail = Buffer.alloc(BYTES_PER_ESTIMATED_TOKEN);
    bytes.copy(tail, 0, whole);
    tokens[whole / BYTES_PER_ESTIMATED_TOKEN] = tail.readUInt32BE(0);
  }
  return tokens;
}

/**
 * Recently tokenized strings, so re-counting a conversation's history each round costs a lookup
 * per message. Bounded by the tokens it holds; the least recently used strings go first.
 */
const TOKEN_CACHE = new Map<string, number[]>();
const MAX_CACHED_TOKENS = 1_000_000;
let cachedTokenCount = 0;

function remember(text: string, tokens: number[]): void {
  TOKEN_CACHE.set(text, tokens);
  cachedTokenCount += tokens.length;
  for (const [oldText, oldTokens] of TOKEN_CACHE) {
    if (cachedTokenCount <= MAX_CACHED_TOKENS) break;
    TOKEN_CACHE.delete(oldText);
    cachedTokenCount -= oldTokens.length;
  }
}
