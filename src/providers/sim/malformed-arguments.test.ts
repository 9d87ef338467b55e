import { describe, expect, it } from "vitest";
import type { ChatModelRequest } from "../chat-model.js";
import { SimChatModel } from "./sim-chat-model.js";
import {
  BUILTIN_DEFINITIONS,
  catalogPrompt,
  collect,
  eventTags,
  partsOf,
  system,
  textOf,
  tryParseJson,
  user,
} from "./test-fixtures.js";

type Verdict = "valid" | "invalid_json" | "missing_required";

const REQUIRED: Record<string, string> = { mock_search: "query", mock_ticket: "title" };

function verdict(name: string, raw: string): Verdict {
  const value = tryParseJson(raw);
  if (typeof value !== "object" || value === null) return "invalid_json";
  return (REQUIRED[name] ?? "") in value ? "valid" : "missing_required";
}

const TOPICS = Array.from({ length: 40 }, (_, index) => `topic number ${index}`);
const nativeRequest = (topic: string): ChatModelRequest => ({
  messages: [system(), user(`search for ${topic} and file a ticket about ${topic}`)],
  tools: BUILTIN_DEFINITIONS,
});
const eventRequest = (topic: string): ChatModelRequest => ({
  messages: [catalogPrompt(), user(`search for ${topic} and file a ticket about ${topic}`)],
});

/** The verdict of every call the model makes over the topics, in both calling styles. */
async function verdicts(options: { malformed_arguments_rate: number; seed?: number }) {
  const model = new SimChatModel({ options });
  const found: Verdict[] = [];
  for (const topic of TOPICS) {
    const native = await collect(model.stream(nativeRequest(topic)));
    for (const call of partsOf(native, "tool-call"))
      found.push(verdict(call.name, call.raw_arguments));
    const events = await collect(model.stream(eventRequest(topic)));
    for (const tag of eventTags(textOf(events))) found.push(verdict(tag.name, tag.raw_arguments));
  }
  expect(found).toHaveLength(TOPICS.length * 4);
  return found;
}

describe("malformed_arguments_rate", () => {
  it("never malforms at 0", async () => {
    expect(new Set(await verdicts({ malformed_arguments_rate: 0 }))).toEqual(new Set(["valid"]));
  });

  it("always malforms at 1, in both ways", async () => {
    const found = await verdicts({ malformed_arguments_rate: 1 });
    expect(found).not.toContain("valid");
    expect(found).toContain("invalid_json");
    expect(found).toContain("missing_required");
  });

  it("malforms about the given share, the same way for the same seed", async () => {
    const first = await verdicts({ malformed_arguments_rate: 0.5, seed: 7 });
    const again = await verdicts({ malformed_arguments_rate: 0.5, seed: 7 });
    const other = await verdicts({ malformed_arguments_rate: 0.5, seed: 8 });
    expect(again).toEqual(first);
    expect(other).not.toEqual(first);
    for (const run of [first, other]) {
      const share = run.filter((found) => found !== "valid").length / run.length;
      expect(share).toBeGreaterThan(0.3);
      expect(share).toBeLessThan(0.7);
    }
  });

  it("keeps a malformed event inside a well-formed tag, so the parser still lifts it", async () => {
    const model = new SimChatModel({ options: { malformed_arguments_rate: 1, seed: 3 } });
    const text = textOf(await collect(model.stream(eventRequest("cats"))));
    expect(eventTags(text).map((tag) => tag.name)).toEqual(["mock_search", "mock_ticket"]);
  });
});
