/**
 * `path` with the given query parameters; empty and absent values are left out. Values go as
 * typed: the server validates them and names a bad one.
 */
export function withQuery(
  path: string,
  params: Readonly<Record<string, string | number | null | undefined>>,
): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value === null || value === undefined || value === "") continue;
    query.set(name, String(value));
  }
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}
