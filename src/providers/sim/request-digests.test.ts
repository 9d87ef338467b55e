import { describe, expect, it } from "vitest";
import { RequestDigests } from "./request-digests.js";
import { digestParts, NATIVE_PREHASH_CHARS, SeededRandom } from "./seeded-random.js";

/** A conversation's requests as the sim fingerprints them: "[", the messages' JSON, the rest. */
function request(messages: readonly string[], rest = "null]"): string[] {
  const parts = ["[", "["];
  messages.forEach((message, index) => {
    if (index > 0) parts.push(",");
    parts.push(message);
  });
  parts.push("]", ",", rest);
  return parts;
}

describe("RequestDigests", () => {
  it("gives digestParts's digest for every request of growing, rewritten and interleaved conversations", () => {
    const random = new SeededRandom(7);
    const digests = new RequestDigests();
    const histories = new Map<string, string[]>();
    let compared = 0;
    let long = 0;
    for (let step = 0; step < 400; step++) {
      const id = `c${random.integer(0, 4)}`;
      const history = histories.get(id) ?? [];
      const move = random.next();
      if (move < 0.7) {
        // The usual next call: the same history and one or two more messages.
        for (let added = random.integer(1, 2); added > 0; added--) {
          history.push(
            `{"role":"user","content":"${"x".repeat(random.integer(0, 4_000))}${step}"}`,
          );
        }
      } else if (move < 0.85 && history.length > 0) {
        // A rewritten message in the middle (a fork, an edit): the prefix before it still holds.
        history[random.integer(0, history.length - 1)] = `{"edited":${step}}`;
      } else if (move < 0.92) {
        history.length = Math.max(0, history.length - random.integer(1, 3));
      }
      histories.set(id, history);
      // Equal texts in other string objects than the last request's, as a new system message is.
      const parts = request(
        history.map((text) => ` ${text}`.slice(1)),
        random.next() < 0.9 ? "null]" : `${step}]`,
      );
      const chars = parts.reduce((sum, part) => sum + part.length, 0);
      if (chars > NATIVE_PREHASH_CHARS) long++;
      expect(digests.digest(id, parts)).toBe(digestParts(parts));
      compared++;
    }
    expect(compared).toBe(400);
    // Both of digestParts's ways were compared, and the switch between them.
    expect(long).toBeGreaterThan(50);
    expect(long).toBeLessThan(350);
  });

  it("gives the whole request's digest without a conversation id, past 70 conversations, and after the caller changed its array", () => {
    const digests = new RequestDigests();
    const parts = request(['{"role":"user","content":"hi"}']);
    expect(digests.digest(undefined, parts)).toBe(digestParts(parts));
    for (let conversation = 0; conversation < 70; conversation++) {
      digests.digest(`c${conversation}`, request([`{"n":${conversation}}`]));
    }
    const again = request(['{"n":0}', '{"n":"more"}']);
    expect(digests.digest("c0", again)).toBe(digestParts(again));
    // The memo keeps its own copy: an array changed in place after a call is a new request.
    again[2] = '{"n":"changed"}';
    again.push("tail");
    expect(digests.digest("c0", again)).toBe(digestParts(again));
  });
});
