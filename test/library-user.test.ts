import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, it } from "vitest";

/**
 * `agent-lab/testing` as a user gets it: a script inside the package imports `agent-lab` and
 * `agent-lab/testing` by name (Node resolves the package's own "exports", from the built dist/),
 * tests an agent with the scripted model and with the fake OpenAI server, and prints what it saw.
 */
it("a user's test drives the scripted model and the fake OpenAI server through agent-lab/testing", async () => {
  const script = fileURLToPath(new URL("fixtures/library-user/agent-test.mjs", import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, [script], {
    cwd: fileURLToPath(new URL("..", import.meta.url)),
  });
  const seen = JSON.parse(stdout);

  expect(seen.scripted).toMatchObject({
    status: "completed",
    answer: "Found it: the lab is local-first.",
    calls: 2,
    pending: 0,
  });
  expect(seen.scripted.types).toEqual(
    expect.arrayContaining(["tool_call", "tool_result", "usage", "text_delta", "turn_end"]),
  );
  // The real mock_search ran on the scripted call, and its result went back to the model.
  expect(seen.scripted.tool_message).toContain("agent lab");

  expect(seen.short.status).toBe("failed");
  expect(seen.short.errors).toEqual([expect.stringContaining("call 1 has no scripted step left")]);

  expect(seen.fake).toMatchObject({ status: "completed", answer: "Hello from the fake." });
  expect(seen.fake.types).toContain("retry");
  expect(seen.fake.requests).toEqual(["POST /v1/chat/completions", "POST /v1/chat/completions"]);
});
