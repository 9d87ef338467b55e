import { z } from "zod";
import { boundedRecord } from "./json-limits.js";

/** A tool call request, whichever mode produced it. `raw_arguments` keeps the model's exact text. */
export const ToolCallEvent = z.strictObject({
  id: z.string().min(1),
  name: z.string().min(1),
  arguments: boundedRecord(),
  raw_arguments: z.string(),
});
export type ToolCallEvent = z.infer<typeof ToolCallEvent>;
