/**
 * The library's public API (README "Use as a library"): running turns, the store, the models and
 * tools a turn uses, the HTTP server, and the domain's records and schemas. Adapter internals (the
 * OpenAI stream decoder, chunk schemas) stay private; test doubles are in `agent-lab/testing`.
 */
export {
  createLabProviders,
  type LabProviderOptions,
  type LabProviders,
} from "./composition/lab-providers.js";
export { type LabRunTurnOptions as RunTurnOptions, runTurn } from "./composition/run-turn.js";
export * from "./domain/errors.js";
export * from "./domain/event-protocol.js";
export * from "./domain/events.js";
export * from "./domain/messages.js";
export * from "./domain/pagination.js";
export * from "./domain/records.js";
export * from "./domain/secrets.js";
export * from "./domain/session-config.js";
export * from "./domain/session-export.js";
export * from "./domain/session-query.js";
export * from "./domain/turn-events.js";
export * from "./domain/usage.js";
export { describeIssues, parseInput } from "./domain/validation.js";
export type * from "./providers/chat-model.js";
export * from "./providers/create-chat-model.js";
export * from "./providers/errors.js";
export {
  OpenAIChatModel,
  type OpenAIChatModelDependencies,
} from "./providers/openai/openai-chat-model.js";
export { OpenAIConfig, type OpenAIConfigInput } from "./providers/openai/openai-config.js";
export { SimChatModel } from "./providers/sim/sim-chat-model.js";
export {
  SIM_REALISTIC_TIMING,
  SimModelSettings,
  type SimModelSettingsInput,
  SimOptions,
  type SimOptionsInput,
} from "./providers/sim/sim-options.js";
export { countTokens, promptTokens, tokenize } from "./providers/tokenizer.js";
export {
  type ModelProvider,
  type PreparedTurn,
  prepareTurn,
  type ToolProvider,
  type TurnProviders,
} from "./runtime/turn-providers.js";
export { type CreateAppOptions, createApp } from "./server/app.js";
export { type RunningServer, type StartServerOptions, startServer } from "./server/start-server.js";
export {
  PostgresSessionStore,
  type PostgresStoreOptions,
} from "./store/postgres/postgres-session-store.js";
export type { Awaitable, ClaimedTurn, SessionStore } from "./store/session-store.js";
export { SCHEMA_VERSION } from "./store/sqlite/schema.js";
export {
  SqliteSessionStore,
  type SqliteStoreOptions,
} from "./store/sqlite/sqlite-session-store.js";
export * from "./store/store-inputs.js";
export { type BuiltinToolOptions, createBuiltinTools } from "./tools/builtin/index.js";
export { ToolRegistry, type ToolRunResult } from "./tools/registry.js";
export type { Tool, ToolContext } from "./tools/tool.js";
