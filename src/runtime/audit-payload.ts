import { createHash } from "node:crypto";

/** Payloads up to this size are copied into the audit log as they are. */
export const AUDIT_INLINE_CHARS = 1_024;
const PREVIEW_CHARS = 200;

/**
 * A payload as the audit log keeps it: as is when small, else a reference (length, sha256, a short
 * preview). The payload itself lives once, in the messages; the audit entry names where (its
 * event id) rather than copying megabytes next to it.
 */
export function auditPayload(value: unknown): unknown {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? "");
  if (text.length <= AUDIT_INLINE_CHARS) return value;
  return {
    omitted: true,
    chars: text.length,
    sha256: createHash("sha256").update(text).digest("hex"),
    preview: text.slice(0, PREVIEW_CHARS),
  };
}
