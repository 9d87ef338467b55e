import { createHash, type Hash } from "node:crypto";
import {
  continueHash,
  digestOf,
  digestOfSha256,
  digestParts,
  fnvStart,
  HIGH_SALT,
  LOW_SALT,
  NATIVE_PREHASH_CHARS,
} from "./seeded-random.js";

/** How many conversations' last requests are remembered (least recently used go first). */
const MAX_CONVERSATIONS = 64;

/**
 * How many SHA-256 states a long conversation keeps, at the end of its last request: the next
 * request shares all of it up to the close of its messages, a few parts before the end.
 */
const SHA_STATES = 8;

/** A conversation's last request, with the hash states after each of its parts. */
interface Chain {
  parts: readonly string[];
  /** The two FNV-1a states before part i (i = 0 … parts.length). */
  high: number[];
  low: number[];
  /** The SHA-256 states before the last SHA_STATES + 1 parts, by index (long requests only). */
  sha: Map<number, Hash>;
}

/**
 * `digestParts(parts)`, remembered per conversation: a conversation's next request repeats the
 * last one's parts up to the close of its messages (the history is the same message objects, and
 * their JSON comes from one cache), so only the parts after the common prefix are hashed, from the
 * states the last request left. The digest is `digestParts`'s to the bit (FNV-1a and SHA-256 both
 * continue from a state); without a conversation id every request is hashed whole.
 */
export class RequestDigests {
  readonly #chains = new Map<string, Chain>();

  digest(conversationId: string | undefined, parts: readonly string[]): string {
    if (conversationId === undefined) return digestParts(parts);
    const last = this.#chains.get(conversationId);
    this.#chains.delete(conversationId);
    const chain = extend(last, parts);
    this.#chains.set(conversationId, chain);
    for (const oldest of this.#chains.keys()) {
      if (this.#chains.size <= MAX_CONVERSATIONS) break;
      this.#chains.delete(oldest);
    }
    let chars = 0;
    for (const part of parts) chars += part.length;
    const end = parts.length;
    if (chars <= NATIVE_PREHASH_CHARS) {
      return digestOf(chain.high[end] as number, chain.low[end] as number);
    }
    return digestOfSha256(shaAt(chain, end).copy().digest("hex"));
  }
}

/** The chain of `parts`, reusing `last`'s states over the prefix both share. */
function extend(last: Chain | undefined, parts: readonly string[]): Chain {
  let common = 0;
  if (last !== undefined) {
    const shared = Math.min(last.parts.length, parts.length);
    while (common < shared && last.parts[common] === parts[common]) common++;
  }
  // The last chain is replaced by this one: its arrays are cut back to the prefix and extended.
  const high = last?.high ?? [fnvStart(HIGH_SALT)];
  const low = last?.low ?? [fnvStart(LOW_SALT)];
  high.length = common + 1;
  low.length = common + 1;
  for (let index = common; index < parts.length; index++) {
    const part = parts[index] as string;
    high.push(continueHash(high[index] as number, part));
    low.push(continueHash(low[index] as number, part));
  }
  const sha = last?.sha ?? new Map<number, Hash>();
  for (const index of sha.keys()) if (index > common) sha.delete(index);
  return { parts, high, low, sha };
}

/**
 * The SHA-256 state after the chain's first `end` parts, from the nearest kept state at or before
 * the end (else from the start); the states of the last SHA_STATES + 1 positions are kept.
 */
function shaAt(chain: Chain, end: number): Hash {
  let from = 0;
  for (const index of chain.sha.keys()) if (index <= end && index > from) from = index;
  let state = chain.sha.get(from) ?? createHash("sha256");
  const keepFrom = end - SHA_STATES;
  for (let index = from; index < end; index++) {
    state = state.copy().update(chain.parts[index] as string, "utf8");
    if (index + 1 >= keepFrom) chain.sha.set(index + 1, state);
  }
  for (const index of chain.sha.keys()) if (index < keepFrom) chain.sha.delete(index);
  return state;
}
