/**
 * `agent-lab/testing`: the lab's own test doubles, for testing an agent built on the lab. A
 * scripted ChatModel (no endpoint at all) and a scripted OpenAI-compatible endpoint on 127.0.0.1
 * (the real `openai` adapter against chosen faults: retries, cut streams, stalls).
 */
export * from "./fake-openai-server.js";
export * from "./scripted-chat-model.js";
