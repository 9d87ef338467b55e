import type { SeededRandom } from "./seeded-random.js";

/**
 * How the simulated model cuts its output into deltas: text in pieces of 1 to 7 characters (about
 * a token each, never splitting a character), so that an `<event>` tag always spans several
 * deltas; tool-call arguments in a few larger pieces, as endpoints stream them.
 */
export function textPieces(text: string, random: SeededRandom): string[] {
  const characters = Array.from(text);
  const pieces: string[] = [];
  for (let start = 0; start < characters.length; ) {
    const size = random.integer(1, 7);
    pieces.push(characters.slice(start, start + size).join(""));
    start += size;
  }
  return pieces;
}

export function argumentPieces(rawArguments: string, random: SeededRandom): string[] {
  const characters = Array.from(rawArguments);
  if (characters.length <= 1) return [rawArguments];
  const count = Math.min(characters.length, random.integer(2, 4));
  const pieces: string[] = [];
  for (let index = 0; index < count; index++) {
    const start = Math.floor((index * characters.length) / count);
    const end = Math.floor(((index + 1) * characters.length) / count);
    pieces.push(characters.slice(start, end).join(""));
  }
  return pieces;
}
