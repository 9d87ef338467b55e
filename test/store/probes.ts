/**
 * One-value mutations of valid inputs, for tests that compare a fast path's verdicts with zod's
 * (src/store/fast-inputs.test.ts, src/store/stored-tool-calls.test.ts).
 */

/** What a call gives: its output, or the message it throws. */
export function outcome(run: () => unknown): { ok: unknown } | { error: string } {
  try {
    return { ok: run() };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

export const deep = (levels: number): unknown => {
  let value: unknown = {};
  for (let level = 1; level < levels; level++) value = { inner: value };
  return value;
};

/** Values that break one constraint or another, put in place of each value of a valid input. */
const PROBES: unknown[] = [
  undefined,
  null,
  "",
  "text",
  "\ud800",
  0,
  -1,
  1.5,
  3,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  2 ** 60,
  true,
  {},
  [],
  [1],
  new Date(0),
  Object.create(null),
  { [Symbol("s")]: 1 },
  JSON.parse('{"__proto__": {"a": 1}}'),
  deep(64),
  deep(65),
];

/** Every input one probe away from `value`: each value replaced, each key removed, one added. */
export function mutations(value: unknown): unknown[] {
  if (value === null || typeof value !== "object") return PROBES;
  const out: unknown[] = [...PROBES];
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      for (const mutated of mutations(item)) {
        out.push(value.map((other, at) => (at === index ? mutated : other)));
      }
    });
    out.push([...value, "extra"]);
    return out;
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    for (const mutated of mutations(record[key])) out.push({ ...record, [key]: mutated });
    const { [key]: _removed, ...rest } = record;
    out.push(rest);
  }
  out.push({ ...record, unexpected: 1 });
  return out;
}
