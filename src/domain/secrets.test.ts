import { describe, expect, it } from "vitest";
import { REDACTED, redactSecrets, redactSecretText, rememberSecretValue } from "./secrets.js";

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
});
