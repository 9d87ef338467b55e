/**
 * JSON a person typed into a form (a call's edited arguments, declared tools): the value, or an
 * error that says what is wrong with it, for the form to show before anything is sent.
 */
export function parseJsonInput(
  text: string,
  expected: "object" | "array",
): { value: unknown } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { error: `not valid JSON (${(error as Error).message})` };
  }
  const isArray = Array.isArray(value);
  const fits =
    expected === "array" ? isArray : value !== null && typeof value === "object" && !isArray;
  return fits ? { value } : { error: `give a JSON ${expected}` };
}
