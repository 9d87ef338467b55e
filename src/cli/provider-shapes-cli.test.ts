/**
 * Every recorded provider shape through the whole lab, as a user meets it: `agent-lab run` against
 * a local endpoint that replays the recording, then `usage --json`, `show --json` and `call --json`
 * read back what was recorded. What the provider reported (tokens with reasoning and cache detail,
 * cost, who answered, refusals) must be what the lab stores, prices and shows.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { completionStream, FakeOpenAIServer, streamReply } from "../../test/fake-openai-server.js";
import {
  loadProviderFixtures,
  type ProviderFixture,
} from "../../test/fixtures/provider-streams/index.js";
import { temporaryDirectory } from "../../test/paths.js";
import type { CallPayloadRecord } from "../domain/call-capture.js";
import { estimateCost, priceFor } from "../domain/prices.js";
import type { MessageRecord } from "../domain/records.js";
import type { UsageSummary } from "../domain/usage.js";
import { runCli, runCliJson } from "./test-fixtures.js";
import type { TurnReport } from "./turn-report.js";

interface Lab {
  folder: string;
  db: string;
}

/** Runs one turn whose first model call is answered with the fixture's recorded stream. */
async function runFixture(
  lab: Lab,
  fake: FakeOpenAIServer,
  fixture: ProviderFixture,
): Promise<TurnReport> {
  const config = join(lab.folder, `${fixture.name}.json`);
  writeFileSync(
    config,
    JSON.stringify({
      tool_invocation_mode: "chat_agent_tools",
      chat_agent: {
        model: `openai:${fixture.expected.requested_model}`,
        base_url: fake.baseUrl,
        options: { max_retries: 0 },
      },
      tools: [],
    }),
  );
  fake.enqueue(streamReply([fixture.sse]));
  // A recording that ends in tool calls gets a second round; the endpoint then just answers.
  if (fixture.expected.tool_calls.length > 0) {
    fake.enqueue(streamReply(completionStream({ text: ["Done."] })));
  }
  return runCliJson<TurnReport>(["--db", lab.db, "run", "--config", config, "hello"]);
}

// Each shape has its own endpoint and session, so they run side by side: the CLI's start-up
// dominates, and it is spent in separate processes.
describe.concurrent.each(loadProviderFixtures().map((fixture) => [fixture.name, fixture] as const))(
  "the %s shape through agent-lab run, usage, show and call",
  (_name, fixture) => {
    it("records, prices and shows what the provider reported", async () => {
      const directory = temporaryDirectory();
      const fake = await FakeOpenAIServer.start();
      try {
        const lab = { folder: directory.path, db: join(directory.path, "lab.sqlite3") };
        await checkFixture(lab, fake, fixture);
      } finally {
        await fake.close();
        directory.remove();
      }
    });
  },
);

async function checkFixture(
  lab: Lab,
  fake: FakeOpenAIServer,
  fixture: ProviderFixture,
): Promise<void> {
  const { expected } = fixture;
  const report = await runFixture(lab, fake, fixture);
  expect(report.error).toBeNull();
  expect(report.answer).not.toContain(expected.reasoning || "\u0000");

  const usage = await runCliJson<UsageSummary>(["--db", lab.db, "usage", report.session_id]);
  const call = usage.calls.find((row) => row.metric_key === "chat:1:1");
  if (call === undefined) throw new Error("no usage row for the recorded call");
  expect({
    prompt_tokens: call.prompt_tokens,
    completion_tokens: call.completion_tokens,
    total_tokens: call.total_tokens,
    cached_tokens: call.cached_tokens,
    reasoning_tokens: call.reasoning_tokens,
    cache_write_tokens: call.cache_write_tokens,
  }).toEqual(expected.usage);
  expect(call.prompt_tokens + call.completion_tokens).toBe(call.total_tokens);
  expect(call).toMatchObject({
    usage_source: expected.usage_source,
    estimated: expected.usage_source === "estimated",
    cost_usd: expected.cost_usd,
    response_model: expected.response_model,
    response_id: expected.response_id,
    system_fingerprint: expected.system_fingerprint,
    finish_reason: expected.finish_reason,
    refusal: expected.refusal !== "",
  });
  expect(Object.keys(call.raw_usage ?? {}).sort()).toEqual(expected.raw_keys);
  // The price table's figure is kept beside the provider's, priced by the requested model.
  const price = priceFor(`openai:${expected.requested_model}`, {});
  const tableCost = estimateCost(expected.usage, price);
  if (tableCost === null) expect(call.cost_estimated_usd).toBeNull();
  else expect(call.cost_estimated_usd).toBeCloseTo(tableCost, 12);
  // The session's money: the provider's figure where it reported one, else the table's.
  const shownCost = expected.cost_usd ?? tableCost;
  if (usage.calls.length === 1) {
    if (shownCost === null) expect(usage.session.cost_usd).toBeNull();
    else expect(usage.session.cost_usd).toBeCloseTo(shownCost, 12);
    expect(usage.session.reported_cost_count).toBe(expected.cost_usd === null ? 0 : 1);
    expect(usage.session.reasoning_tokens).toBe(expected.usage.reasoning_tokens);
    expect(usage.session.cache_write_tokens).toBe(expected.usage.cache_write_tokens);
  }

  // The table names the call and, when a router answered with another model, that model.
  if (expected.response_model !== null && expected.response_model !== expected.requested_model) {
    const table = await runCli(["--db", lab.db, "usage", report.session_id]);
    expect(table.status).toBe(0);
    expect(table.stdout).toContain("chat:1:1");
    expect(table.stdout).toContain(expected.response_model);
  }

  const shown = await runCliJson<{ messages: MessageRecord[] }>([
    "--db",
    lab.db,
    "show",
    report.session_id,
  ]);
  const assistant = shown.messages.find((message) => message.role === "assistant");
  expect(assistant).toMatchObject({
    content: expected.text,
    reasoning: expected.reasoning === "" ? null : expected.reasoning,
    refusal: expected.refusal === "" ? null : expected.refusal,
  });

  // The endpoint is on this machine, so the call was captured by default: exactly what went
  // over the wire, both ways.
  const payload = await runCliJson<CallPayloadRecord>([
    "--db",
    lab.db,
    "call",
    report.session_id,
    "chat:1:1",
  ]);
  expect(payload.response_body).toBe(fixture.sse);
  expect(payload.response_truncated).toBe(false);
  const sent = fake.requests.at(expected.tool_calls.length > 0 ? -2 : -1);
  expect(JSON.parse(payload.request_body)).toEqual(sent?.body);
}
