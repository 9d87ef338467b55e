import { formatEventTag } from "../domain/event-protocol.js";
import type {
  ChatModel,
  ChatModelPart,
  ChatModelRequest,
  StreamOptions,
} from "../providers/chat-model.js";
import { closingParts, hasToolResults } from "./scripted-model.js";

/**
 * An instant chat agent for the tools benchmark: round one calls one named tool (a native call
 * when offered `tools`, an `<event>` tag otherwise), round two, with the result present, answers.
 */
export class OneCallModel implements ChatModel {
  readonly provider = "bench";
  readonly model = "one-call";
  readonly simulated = true;

  constructor(
    private readonly tool: string,
    private readonly args: Record<string, unknown>,
  ) {}

  async *stream(
    request: ChatModelRequest,
    _options: StreamOptions = {},
  ): AsyncGenerator<ChatModelPart> {
    yield { type: "response-start", attempt: 1, status: 200, request_id: null, at_ms: 0 };
    yield { type: "first-token", ttft_ms: 0 };
    const answered = hasToolResults(request);
    const args = JSON.stringify(this.args);
    const native = (request.tools ?? []).length > 0;
    if (answered) {
      yield { type: "text-delta", text: "Done." };
    } else if (native) {
      yield { type: "tool-call", index: 0, id: "call_1", name: this.tool, raw_arguments: args };
    } else {
      yield { type: "text-delta", text: formatEventTag(this.tool, args) };
    }
    yield* closingParts(answered || !native ? "stop" : "tool_calls", 0);
  }
}
