import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { FakeOpenAIServer } from "../../test/fake-openai-server.js";
import {
  answerRound,
  fakeServerConfig,
  requestMessages,
  toolRound,
} from "../../test/runtime/scripted-turns.js";
import {
  collectTurn,
  MODES,
  openTemporaryStore,
  type TemporaryStore,
  useServerLab,
} from "../../test/runtime/turn-harness.js";
import { createLabProviders } from "../composition/lab-providers.js";
import { Suite } from "../domain/experiment.js";
import { runExperiment } from "../experiments/run-experiment.js";

const PROMPT = "You are the order desk of Example Co. Answer in one sentence.";

function turnStartDetails(lab: Pick<TemporaryStore, "store">, sessionId: string) {
  return lab.store
    .listAuditLogs(sessionId)
    .filter((entry) => entry.event === "turn_start")
    .map((entry) => entry.details as { system_prompt?: string });
}

describe.each(MODES)("the system prompt, %s", (mode) => {
  const lab = useServerLab();

  it("is sent as the system message every round, and recorded once per turn as sent", async () => {
    lab.server.enqueue(
      toolRound(mode, [{ id: "c1", name: "mock_search", arguments: '{"query":"orders"}' }]),
      answerRound("Found them."),
    );
    const { end, error } = await collectTurn({
      store: lab.store,
      session_id: "s",
      message: "search for orders",
      model_dependencies: { env: {} },
      ...withPrompt(mode, lab.server),
    });
    expect(error).toBeNull();
    expect(end?.status).toBe("completed");
    const sent = [0, 1].map((index) => requestMessages(lab.server, index)[0]);
    expect(sent.map((message) => message?.role)).toEqual(["system", "system"]);
    const [recorded] = turnStartDetails(lab, "s");
    expect(recorded?.system_prompt).toBe(sent[0]?.content);
    expect(sent[1]?.content).toBe(sent[0]?.content);
    if (mode === "chat_agent_tools") {
      expect(recorded?.system_prompt).toBe(PROMPT);
    } else {
      // The mode still adds the event catalog after the user's prompt.
      expect(recorded?.system_prompt?.startsWith(`${PROMPT}\n\n`)).toBe(true);
      expect(recorded?.system_prompt).toContain("mock_search");
    }
    expect(turnStartDetails(lab, "s")).toHaveLength(1);
  });
});

function withPrompt(mode: (typeof MODES)[number], server: FakeOpenAIServer) {
  const config = fakeServerConfig(mode, server);
  return {
    config: {
      ...config,
      chat_agent: { ...(config.chat_agent as object), system_prompt: PROMPT },
    },
  };
}

describe("a suite's per-scenario system prompt", () => {
  let lab: TemporaryStore;
  beforeEach(() => {
    lab = openTemporaryStore();
  });
  afterEach(() => lab.dispose());

  it("becomes that scenario's runs' chat agent prompt, the others keep the suite's", async () => {
    const suite = Suite.parse({
      name: "prompts",
      config: { chat_agent: { system_prompt: "Suite prompt." } },
      matrix: { modes: ["chat_agent_tools"] },
      scenarios: [
        { id: "own", category: "simple", system_prompt: PROMPT, turns: [{ user: "hello" }] },
        { id: "shared", category: "simple", turns: [{ user: "hello" }] },
      ],
    });
    const outcome = await runExperiment({
      store: lab.store,
      suite,
      providers: createLabProviders(),
    });
    expect(outcome.finished).toBe(2);
    const prompts = Object.fromEntries(
      lab.store
        .findSessionsByExperiment(outcome.experiment_id)
        .map((session) => [
          (session.config.experiment as { scenario: string }).scenario,
          turnStartDetails(lab, session.id)[0]?.system_prompt,
        ]),
    );
    expect(prompts).toEqual({ own: PROMPT, shared: "Suite prompt." });
  });
});
