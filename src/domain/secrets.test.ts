import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  findCredentialProblems,
  isKeyVariableName,
  mayHoldKeyShape,
  piecesMayHoldSecret,
  REDACTED,
  redactSecrets,
  redactSecretText,
  rememberSecretValue,
  SECRET_SHAPES,
  SecretTextScrubber,
} from "./secrets.js";

describe("redactSecretText", () => {
  it.each([
    ["sk-abcdefghijklmnop1234", REDACTED],
    ["key AIzaSyA1234567890abcdefghijklmnopqrstu", `key ${REDACTED}`],
    ["ghp_abcdefghijklmnop1234 and xoxb-abcdefghijklmnop1234", `${REDACTED} and ${REDACTED}`],
    ["github_pat_abcdefghijklmnop1234", REDACTED],
    ["glpat-abcdefghijklmnop1234", REDACTED],
    ["BEARER abcdefgh12345678", `BEARER ${REDACTED}`],
    ["Authorization: basic dXNlcjpwYXNz", `Authorization: basic ${REDACTED}`],
    [
      "https://x.test/?SIG=abcdefgh1234&Api-Key='12345678abc'",
      `https://x.test/?SIG=${REDACTED}&Api-Key='${REDACTED}'`,
    ],
    ['{"password": "hunter2hunter2"}', `{"password": "${REDACTED}"}`],
  ])("blanks every known shape, whatever its case: %s", (text, clean) => {
    expect(redactSecretText(text)).toBe(clean);
  });

  it("leaves text without a secret as it is, and blanks a value this process sent anywhere", () => {
    expect(redactSecretText("call_27c514f828d08702 mock_search sim:sim")).toBe(
      "call_27c514f828d08702 mock_search sim:sim",
    );
    rememberSecretValue("plain-looking-value-42");
    expect(redactSecretText("echo: plain-looking-value-42!")).toBe(`echo: ${REDACTED}!`);
  });

  it("redactSecrets blanks secret-named keys and secret text at any depth", () => {
    expect(
      redactSecrets({ a: [{ api_key: "x" }, "Bearer abcdefgh12345678"], n: 1, ok: true, z: null }),
    ).toStrictEqual({ a: [{ api_key: REDACTED }, `Bearer ${REDACTED}`], n: 1, ok: true, z: null });
  });

  it("skips the shapes only for texts none of them matches (property)", () => {
    // Every literal the shapes need, in other cases, inside words and beside separators.
    const fragment = fc.constantFrom(
      ...["key", "KEY", "Key", "token", "Token", "_tokens", "tokens", "x-", "api", "Api", "_"],
      ...["-", "sig", "SIG", "signature", "secret", "password", "bearer", "BEARER", "Basic"],
      ...["sk-", "pk-", "rk-", "AIza", "aiza", "ghp_", "gho_", "github_pat_", "xoxb-", "glpat-"],
      ...["access_token", "access-token", "apikey", "api_key", "api-key", ":", "=", "'", '"'],
      ...[
        " ",
        "\t",
        "\n",
        "a",
        "Z",
        "9",
        "é",
        "abcdefgh12345678",
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123",
      ],
      ...["prompt_tokens", "max_tokens", "9key", "_key", "ékey"],
      // Letters that fold to s and k under a `u` flag: the hint must follow any such change.
      ...["ſk-", "\u212Aey", "toſen"],
    );
    // And texts shaped like secrets: a name (maybe after `x-` or inside a word), a separator, a
    // value; a prefix and a value; a scheme and a value.
    const value = fc.constantFrom("abcdefgh12345678", "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", "a1");
    const names = ["api_key", "api-key", "apikey", "key", "token", "access_token", "access-token"];
    const named = fc
      .tuple(
        fc.constantFrom("", " ", "x-", "_", "9", "é", '"', "?"),
        fc.constantFrom(...names, "sig", "signature", "secret", "password"),
        fc.constantFrom("", '"', "'"),
        fc.constantFrom("=", ":", " : ", "= "),
        fc.constantFrom("", '"', "'"),
        value,
      )
      .map((parts) => parts.join(""));
    const prefixed = fc
      .tuple(
        fc.constantFrom("", " ", "_", "9", "é"),
        fc.constantFrom(
          "sk-",
          "pk-",
          "rk-",
          "AIza",
          "ghp_",
          "ghs_",
          "github_pat_",
          "xoxp-",
          "glpat-",
        ),
        value,
      )
      .map((parts) => parts.join(""));
    const scheme = fc
      .tuple(
        fc.constantFrom("", " ", "_"),
        fc.constantFrom("Bearer", "basic", "TOKEN"),
        fc.constantFrom(" ", "\t", "  "),
        value,
      )
      .map((parts) => parts.join(""));
    const cased = (text: fc.Arbitrary<string>) =>
      fc.tuple(text, fc.boolean()).map(([t, upper]) => (upper ? t.toUpperCase() : t));
    const text = fc
      .tuple(
        fc.array(fragment, { maxLength: 6 }).map((parts) => parts.join("")),
        fc.oneof(fc.constant(""), cased(named), cased(prefixed), cased(scheme)),
        fc.array(fragment, { maxLength: 6 }).map((parts) => parts.join("")),
      )
      .map((parts) => parts.join(""));
    let matched = 0;
    fc.assert(
      fc.property(text, (text) => {
        const shaped = SECRET_SHAPES.some(([pattern]) =>
          new RegExp(pattern.source, pattern.flags.replace("g", "")).test(text),
        );
        if (shaped) matched++;
        if (shaped) expect(mayHoldKeyShape(text), text).toBe(true);
        if (!mayHoldKeyShape(text)) expect(redactSecretText(text)).toBe(text);
      }),
      { numRuns: 5000 },
    );
    // The texts did reach the shapes, so the check above was made.
    expect(matched).toBeGreaterThan(1000);
  });

  it("reads a captured stream's usage field names as no secret, and still blanks a token", () => {
    const usage = '{"usage":{"prompt_tokens":12,"completion_tokens":1000,"total_tokens":1012}}';
    expect(mayHoldKeyShape(usage)).toBe(false);
    expect(redactSecretText(`${usage} token: abcdefgh12345678`)).toBe(
      `${usage} token: ${REDACTED}`,
    );
  });
});

describe("SecretTextScrubber", () => {
  const key = "qa-upstream-KEY-0123456789";

  /** The pieces scrubbed one by one, and what `end` gives, joined. */
  const scrubbed = (pieces: readonly string[]) => {
    const scrubber = new SecretTextScrubber();
    return pieces.map((piece) => scrubber.push(piece)).join("") + scrubber.end();
  };

  it("blanks a kept key however the text is split around it, and leaves the rest as it came", () => {
    rememberSecretValue(key);
    const text = `your key is Bearer ${key} (and again: ${key}), done`;
    const clean = `your key is Bearer ${REDACTED} (and again: ${REDACTED}), done`;
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: text.length - 1 })), (cuts) => {
        const at = [0, ...[...cuts].sort((a, b) => a - b), text.length];
        const pieces = at.slice(1).map((end, index) => text.slice(at[index], end));
        expect(scrubbed(pieces)).toBe(clean);
      }),
    );
  });

  it("holds back only an end that could begin a key, and gives a short one back at the end", () => {
    rememberSecretValue(key);
    const scrubber = new SecretTextScrubber();
    expect(scrubber.push("plain text, qa-up")).toBe("plain text, ");
    expect(scrubber.push("date later")).toBe("qa-update later");
    expect(scrubber.push(" ends with qa-")).toBe(" ends with ");
    expect(scrubber.end()).toBe("qa-");
  });

  it("blanks a kept key that holds another whole, split right after the inner one", () => {
    const inner = "inner-KEY-abcdefgh";
    rememberSecretValue(inner);
    rememberSecretValue(`${inner}:org-xyz`);
    expect(scrubbed(["a ", inner, ":org-xyz b"])).toBe(`a ${REDACTED} b`);
    expect(scrubbed(["a ", inner, " b"])).toBe(`a ${REDACTED} b`);
    expect(scrubbed(["a ", inner])).toBe(`a ${REDACTED}`);
  });

  it("blanks most of a key cut off at the end of the text", () => {
    rememberSecretValue(key);
    expect(scrubbed(["leaked: ", key.slice(0, 12)])).toBe(`leaked: ${REDACTED}`);
  });
});

describe("the environment variables a config may name", () => {
  it("a key's: a name ending in KEY or TOKEN, in api_key_env and in a header alike, never the lab's token", () => {
    const headers = (value: string) =>
      findCredentialProblems({ options: { headers: { Authorization: value } } });
    for (const name of ["OPENAI_API_KEY", "HF_TOKEN", "router_key"]) {
      expect(isKeyVariableName(name)).toBe(true);
      expect(headers(`Bearer \${${name}}`)).toStrictEqual([]);
    }
    for (const name of ["PGPASSWORD", "HOME", "PATH", "AGENT_LAB_TOKEN", "KEYRING"]) {
      expect(isKeyVariableName(name)).toBe(false);
      expect(headers(`Bearer \${${name}}`)).toHaveLength(1);
    }
  });
});

describe("piecesMayHoldSecret", () => {
  const remembered = "pieces-test-remembered-value-0123";
  rememberSecretValue(remembered);
  /** The text cut at the given places (sorted, within it), empty pieces and all. */
  const cut = (text: string, at: number[]) => {
    const places = [0, ...at.map((place) => place % (text.length + 1)).sort((a, b) => a - b)];
    return places.map((place, index) => text.slice(place, places[index + 1] ?? text.length));
  };

  it("says a text split anywhere is clean only when redacting it whole changes nothing", () => {
    const fragment = fc.constantFrom(
      'data: {"id":"chatcmpl-1","choices":[{"delta":{"content":"word1 "}}]}\n\n',
      '"usage":{"prompt_tokens":12,"completion_tokens":3}',
      "token: abcdefgh12345678",
      "Bearer abcdefgh.12345678",
      "sk-abcdefghijklmnop1234",
      "ghp_abcdefghijklmnop1234",
      "api_key=abcdefgh12345678",
      remembered,
      "sk-",
      "x",
      " ",
      "é€",
    );
    let changed = 0;
    fc.assert(
      fc.property(
        fc.array(fragment, { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        (fragments, at) => {
          const text = fragments.join("");
          const pieces = cut(text, at);
          expect(pieces.join("")).toBe(text);
          const dirty = redactSecretText(text) !== text;
          if (dirty) changed++;
          if (dirty) expect(piecesMayHoldSecret(pieces), JSON.stringify(pieces)).toBe(true);
        },
      ),
      { numRuns: 3000 },
    );
    // The texts did hold keys, so the check above was made.
    expect(changed).toBeGreaterThan(1000);
  });

  it("finds a key spread over several pieces, one of them shorter than the key", () => {
    expect(piecesMayHoldSecret(["data: sk-abcd", "ef", "ghijklmnop1234\n"])).toBe(true);
    expect(piecesMayHoldSecret(["pieces-test-", "re", "membered-value-0123"])).toBe(true);
    expect(piecesMayHoldSecret(["a", "pi_k", "ey=abcdefgh12345678"])).toBe(true);
  });

  it("passes a captured stream read in large pieces, its usage's field names included", () => {
    const event = 'data: {"choices":[{"delta":{"content":"word7 "}}]}\n\n';
    const usage = 'data: {"usage":{"prompt_tokens":12,"completion_tokens":1000}}\n\n';
    const text = `${event.repeat(2000)}${usage}data: [DONE]\n\n`;
    expect(piecesMayHoldSecret(cut(text, [65536, 131072]))).toBe(false);
    expect(piecesMayHoldSecret([])).toBe(false);
  });
});
