import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { REDACTED, redactKnownSecrets, rememberSecretValue } from "../../domain/secrets.js";
import { SecretScrubber } from "./secret-scrubber.js";

const KEY = "sk-scrubber-test-0123456789abcdef";
rememberSecretValue(KEY);

const bytes = (text: string) => Buffer.from(text, "utf8");
const text = (pieces: Uint8Array[]) => Buffer.concat(pieces).toString("utf8");

/** Every piece through one scrubber, then its end. */
function scrub(pieces: Uint8Array[]): Uint8Array[] {
  const scrubber = new SecretScrubber();
  return [...pieces.map((piece) => scrubber.push(piece)), scrubber.end()];
}

describe("SecretScrubber", () => {
  const event = `data: {"error":{"message":"Invalid key Bearer ${KEY} (é, 字)"}}\n\n`;
  const clean = `data: {"error":{"message":"Invalid key Bearer ${REDACTED} (é, 字)"}}\n\n`;

  it("blanks a remembered key in a piece and hands back a piece without one untouched", () => {
    expect(text(scrub([bytes(event)]))).toBe(clean);
    const plain = bytes('data: {"choices":[]}\n\n');
    const scrubber = new SecretScrubber();
    expect(scrubber.push(plain)).toBe(plain);
    expect(scrubber.end()).toHaveLength(0);
  });

  it("blanks a key split between pieces at every byte, and a key twice in one piece", () => {
    const whole = bytes(`${event}${event}`);
    for (let cut = 1; cut < whole.length; cut++) {
      // Had the key's beginning gone out with the first piece, the rest would not be the key
      // and would go out too: the text would not be the clean one.
      const pieces = scrub([whole.subarray(0, cut), whole.subarray(cut)]);
      expect(text(pieces), `cut at ${cut}`).toBe(`${clean}${clean}`);
    }
  });

  it("blanks a longer key that begins with a shorter one whole", () => {
    const longer = `${KEY}-and-more-0987`;
    rememberSecretValue(longer);
    expect(text(scrub([bytes(`key ${longer} end`)]))).toBe(`key ${REDACTED} end`);
  });

  it("with many keys sharing a prefix, blanks what the text's own redaction blanks, split anywhere (property)", () => {
    // As a pass_client_key upstream remembers them: one per client, all `sk-…`; one inside another.
    const clients = Array.from({ length: 40 }, (_, index) => `sk-client-${index}-0123456789ab`);
    const inner = "AIzaInnerKey0123456789";
    const outer = `xx-${inner}-outer`;
    for (const key of [...clients, inner, outer]) rememberSecretValue(key);
    const fragment = fc.oneof(
      fc.constantFrom(...clients, inner, outer, "sk-", "sk-client-", "AIza", "xx-", "é字", "\n\n"),
      fc.string({ maxLength: 8 }),
    );
    fc.assert(
      fc.property(fc.array(fragment, { maxLength: 8 }), fc.nat(), (parts, at) => {
        const whole = bytes(parts.join(""));
        const cut = whole.length === 0 ? 0 : at % (whole.length + 1);
        const sent = text(scrub([whole.subarray(0, cut), whole.subarray(cut)]));
        expect(sent).toBe(redactKnownSecrets(whole.toString("utf8")));
      }),
      { numRuns: 2000 },
    );
  });

  it("holds back only what could begin the key, and sends it at the end when the key never came", () => {
    const scrubber = new SecretScrubber();
    const sent = scrubber.push(bytes("partial sk-scr"));
    expect(Buffer.from(sent).toString()).toBe("partial ");
    expect(Buffer.from(scrubber.push(bytes("ibble and more\n\n"))).toString()).toBe(
      "sk-scribble and more\n\n",
    );
    expect(Buffer.from(scrubber.push(bytes("tail sk-scrubber"))).toString()).toBe("tail ");
    expect(Buffer.from(scrubber.end()).toString()).toBe("sk-scrubber");
  });
});
