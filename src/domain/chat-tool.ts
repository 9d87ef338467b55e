/** A tool as offered to a model natively; `parameters` is a JSON Schema object. */
export interface ChatToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}
