/**
 * Text from a model, a tool, a title or an import, made safe to print on a terminal. A terminal
 * obeys control characters: ESC starts sequences that clear the screen (`ESC[2J`), set the window
 * title (`ESC]0;…`), write the clipboard (OSC 52) or worse; C1 controls (U+0080–U+009F, e.g. U+009B
 * CSI) do the same on some terminals; a carriage return or backspace overwrites what was printed;
 * bidi overrides reorder what is shown. Each such character is shown as a visible escape (`\x1b`,
 * `\u202e`) instead: escaping the introducer makes the whole sequence inert, and the reader still
 * sees that something was there. Newlines and tabs are kept.
 */

const UNSAFE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export function terminalSafe(text: string): string {
  // A model's CRLF line ends are line ends, not an overwrite.
  return text.replace(/\r\n/g, "\n").replace(UNSAFE, (character) => {
    const code = character.charCodeAt(0);
    return code <= 0xff
      ? `\\x${code.toString(16).padStart(2, "0")}`
      : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

// Characters JSON.stringify leaves raw although a terminal may act on them.
const JSON_UNSAFE = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

/**
 * JSON text with DEL, C1 and bidi controls written as `\uXXXX` escapes: the same JSON value, but
 * nothing a terminal acts on. JSON.stringify already escapes C0 (ESC included) itself.
 */
export function terminalSafeJson(json: string): string {
  return json.replace(
    JSON_UNSAFE,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
