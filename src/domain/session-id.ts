import { z } from "zod";

/**
 * A session id the lab takes for a new session (created, ensured, imported, named by a gateway
 * client): 1-200 characters, not blank, no control characters. An id is printed in tables and
 * typed in commands: a newline in one broke the `sessions` table across two lines, and an id of
 * spaces could not be told from none.
 */
export const SessionId = z
  .string()
  .min(1, "a session id cannot be empty")
  .max(200, "a session id is at most 200 characters")
  .refine((id) => id.trim() !== "", "a session id cannot be blank")
  .refine(
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
    (id) => !/[\u0000-\u001f\u007f-\u009f]/.test(id),
    "a session id cannot hold control characters (a newline, a tab…)",
  );
