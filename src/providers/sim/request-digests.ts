import { createHash, type Hash } from "node:crypto";
import { ConversationMemo } from "./conversation-memo.js";
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

/** How many conversations' last requests are remembered (least recently used go first)… */
const MAX_CONVERSATIONS = 64;
/** …and how many characters of their parts, all together (the newest is always kept). */
const MAX_KEPT_CHARS = 4_000_000;

/**
 * How many SHA-256 states a long conversation keeps, at the end of its last request: the next
 * request shares all of it up to the close of its messages, a few parts before the end.
 */
const SHA_STATES = 8;

/** A conversation's last request, with the hash states after each of its parts. */
interface Chain {
  parts: readonly string[];
  /** Its length in characters. */
  chars: number;
  /**
   * The two FNV-1a states before part i, and the characters before it, for as long as that is at
   * most NATIVE_PREHASH_CHARS: a longer request is digested through SHA-256, never by FNV.
   */
  high: number[];
  low: number[];
  before: number[];
  /** The SHA-256 states before the last SHA_STATES + 1 parts, by index (long requests only). */
  sha: Map<number, Hash>;
}

/**
 * `digestParts(parts)`, remembered per conversation: a conversation's next request repeats the
 * last one's parts up to the close of its messages (the history is the same message objects, and
 * their JSON comes from one cache), so only the parts after the common prefix are hashed, from the
 * states the last request left. The digest is `digestParts`'s to the bit (FNV-1a and SHA-256 both
 * continue from a state); without a conversation id every request is hashed whole. The digest
 * depends on the parts alone, so one memo serves every sim model of the process (a server builds
 * one per turn).
 */
export class RequestDigests {
  readonly #chains = new ConversationMemo<Chain>(MAX_CONVERSATIONS, MAX_KEPT_CHARS);

  digest(conversationId: string | undefined, parts: readonly string[]): string {
    if (conversationId === undefined) return digestParts(parts);
    const chain = this.#chains.update(conversationId, (last) => extend(last, parts));
    const end = parts.length;
    if (chain.chars <= NATIVE_PREHASH_CHARS) {
      return digestOf(chain.high[end] as number, chain.low[end] as number);
    }
    return digestOfSha256(shaAt(chain, end).copy().digest("hex"));
  }
}

/** The chain of `parts`, reusing `last`'s states over the prefix both share. */
function extend(last: Chain | undefined, given: readonly string[]): Chain {
  // A copy: a caller that changed its array in place would otherwise change the remembered one.
  const parts = [...given];
  let common = 0;
  if (last !== undefined) {
    const shared = Math.min(last.parts.length, parts.length);
    while (common < shared && last.parts[common] === parts[common]) common++;
  }
  let chars = 0;
  for (const part of parts) chars += part.length;
  // The last chain is replaced by this one: its arrays are cut back to the prefix and extended.
  const high = last?.high ?? [fnvStart(HIGH_SALT)];
  const low = last?.low ?? [fnvStart(LOW_SALT)];
  const before = last?.before ?? [0];
  const from = Math.min(common, high.length - 1);
  high.length = low.length = before.length = from + 1;
  for (let index = from; index < parts.length; index++) {
    const part = parts[index] as string;
    const after = (before[index] as number) + part.length;
    if (after > NATIVE_PREHASH_CHARS) break;
    high.push(continueHash(high[index] as number, part));
    low.push(continueHash(low[index] as number, part));
    before.push(after);
  }
  const sha = last?.sha ?? new Map<number, Hash>();
  for (const index of sha.keys()) if (index > common) sha.delete(index);
  return { parts, chars, high, low, before, sha };
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
