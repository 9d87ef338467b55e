import { describe, expect, it } from "vitest";
import { completionStream, streamReply } from "../../test/fake-openai-server.js";
import { collectTurn, MODES, useServerLab } from "../../test/runtime/turn-harness.js";
import { formatEventTag } from "../domain/event-protocol.js";

/**
 * An agent's sampling settings in the session config (max_tokens, top_p, seed, stop, temperature)
 * go with each of that agent's calls, in either mode; the event agent's own settings with its
 * argument repairs, never the chat agent's.
 */

const SETTINGS = { max_tokens: 50, top_p: 0.8, seed: 5, stop: ["###"], temperature: 0.2 };

describe("sampling settings", () => {
  const lab = useServerLab();

  describe.each(MODES)("%s: the chat agent's settings", (mode) => {
    it("are sent with its call as the config names them, and nothing the config leaves out", async () => {
      lab.server.enqueue(streamReply(completionStream({ text: ["Done."] })));
      lab.server.enqueue(streamReply(completionStream({ text: ["Done again."] })));
      const chat = { model: "openai:fake-model", base_url: lab.server.baseUrl };
      const options = { max_retries: 0 };
      const first = await collectTurn({
        store: lab.store,
        session_id: "set",
        message: "hello",
        config: {
          tool_invocation_mode: mode,
          chat_agent: { ...chat, options, ...SETTINGS },
          event_agent: { model: "sim" },
          tools: [],
        },
      });
      expect(first.end?.status).toBe("completed");
      expect(lab.server.requests[0]?.body).toMatchObject(SETTINGS);
      const second = await collectTurn({
        store: lab.store,
        session_id: "plain",
        message: "hello",
        config: {
          tool_invocation_mode: mode,
          chat_agent: { ...chat, options },
          event_agent: { model: "sim" },
          tools: [],
        },
      });
      expect(second.end?.status).toBe("completed");
      const plain = lab.server.requests[1]?.body as Record<string, unknown>;
      for (const name of Object.keys(SETTINGS)) expect(plain).not.toHaveProperty(name);
    });

    it("a turn's own chat_sampling replaces the config's for that turn only, and is recorded with it", async () => {
      for (let turn = 0; turn < 2; turn++) {
        lab.server.enqueue(streamReply(completionStream({ text: [`Done ${turn}.`] })));
      }
      const config = {
        tool_invocation_mode: mode,
        chat_agent: { model: "openai:fake-model", base_url: lab.server.baseUrl, ...SETTINGS },
        event_agent: { model: "sim" },
        tools: [],
      };
      for (const chat_sampling of [{ temperature: 1.1, seed: 9 }, undefined]) {
        const { end } = await collectTurn({
          store: lab.store,
          session_id: "own",
          message: "hello",
          config,
          ...(chat_sampling === undefined ? {} : { chat_sampling }),
        });
        expect(end?.status).toBe("completed");
      }
      const [own, configured] = lab.server.requests.map((request) => request.body);
      expect(own).toMatchObject({ temperature: 1.1, seed: 9 });
      for (const name of ["max_tokens", "top_p", "stop"]) expect(own).not.toHaveProperty(name);
      expect(configured).toMatchObject(SETTINGS);
      const starts = lab.store
        .listAuditLogs("own")
        .filter((row) => row.event === "turn_start")
        .map((row) => row.details.chat_sampling);
      expect(starts).toStrictEqual([{ temperature: 1.1, seed: 9 }, undefined]);
      // Out of range: refused naming it, before the turn (or a session) is stored.
      const refused = await collectTurn({
        store: lab.store,
        session_id: "never",
        message: "hello",
        config,
        chat_sampling: { top_p: 3 },
      });
      expect(String(refused.error)).toMatch(/chat_sampling: top_p/);
      expect(lab.store.getSession("never")).toBeNull();
    });

    it("a setting out of range refuses the session's config, naming it", async () => {
      const { error, end } = await collectTurn({
        store: lab.store,
        message: "hello",
        config: {
          tool_invocation_mode: mode,
          chat_agent: { model: "openai:fake-model", base_url: lab.server.baseUrl, top_p: 2 },
        },
      });
      expect(end).toBeUndefined();
      expect(error).toMatchObject({ message: expect.stringMatching(/chat_agent\.top_p: Too big/) });
      expect(lab.server.requests).toHaveLength(0);
    });
  });

  describe("dual_agent: the event agent's settings", () => {
    it("go with its argument repair, and the chat agent's do not", async () => {
      const server = { base_url: lab.server.baseUrl, options: { max_retries: 0 } };
      lab.server.enqueue(
        streamReply(completionStream({ text: [formatEventTag("mock_search", "query: wal")] })),
      );
      lab.server.enqueue(streamReply(completionStream({ text: ['{"query":"wal"}'] })));
      lab.server.enqueue(streamReply(completionStream({ text: ["Found it."] })));
      const { end } = await collectTurn({
        store: lab.store,
        session_id: "repair",
        message: "search for wal",
        config: {
          tool_invocation_mode: "dual_agent",
          chat_agent: { model: "openai:fake-model", ...server, max_tokens: 300, stop: ["###"] },
          event_agent: { model: "openai:fake-model", ...server, seed: 9, temperature: 0 },
          tools: ["mock_search"],
        },
      });
      expect(end?.status).toBe("completed");
      const repair = lab.server.requests[1]?.body as Record<string, unknown>;
      expect(repair).toHaveProperty("response_format");
      expect(repair).toMatchObject({ seed: 9, temperature: 0 });
      expect(repair).not.toHaveProperty("max_tokens");
      expect(repair).not.toHaveProperty("stop");
      expect(lab.server.requests[2]?.body).toMatchObject({ max_tokens: 300, stop: ["###"] });
    });
  });
});
