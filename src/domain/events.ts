import { z } from "zod";

/** A tool call request, whichever mode produced it. `raw_arguments` keeps the model's exact text. */
export const ToolCallEvent = z.strictObject({
  id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()),
  raw_arguments: z.string(),
});
export type ToolCallEvent = z.infer<typeof ToolCallEvent>;
