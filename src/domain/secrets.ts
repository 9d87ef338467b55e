/**
 * Keys whose values are credentials. `api_key_env` (the *name* of a variable) is deliberately not
 * matched: naming where a secret lives is the safe way to configure one.
 */
const SECRET_KEY =
  /^(api[_-]?key|apikey|authorization|password|passwd|secret|client[_-]?secret|access[_-]?token|refresh[_-]?token|bearer[_-]?token|private[_-]?key)$/i;

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/** Paths of every key, at any depth, that would store a credential. */
export function findSecretKeys(
  value: unknown,
  path: (string | number)[] = [],
): (string | number)[][] {
  if (Array.isArray(value)) {
    return value.flatMap((item, index) => findSecretKeys(item, [...path, index]));
  }
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([key, child]) =>
    isSecretKey(key) ? [[...path, key]] : findSecretKeys(child, [...path, key]),
  );
}

export const REDACTED = "[redacted]";

/** A copy with every credential value replaced, for places (the audit log) that must never hold one. */
export function redactSecrets<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => redactSecrets(item)) as T;
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, child]) => [
      key,
      isSecretKey(key) ? REDACTED : redactSecrets(child),
    ]),
  ) as T;
}
