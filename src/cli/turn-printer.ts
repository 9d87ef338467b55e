import { z } from "zod";
import type { TurnEvent } from "../domain/turn-events.js";
import { type CliIo, formatCount, formatMs, terminalSafe, truncate } from "./output.js";
import type { TurnReport } from "./turn-report.js";
import { rollupCostText } from "./usage-cost.js";

const TOOL_ERROR = z.object({ error: z.string() });
const DETAIL_WIDTH = 160;

/**
 * Prints a turn for people as it happens: the answer text as it streams, one line per tool call,
 * result, fallback and retry, and a footer. Tool lines never cut a line of text in two: one that
 * arrives mid-line (the dual_agent mode dispatches tools while the text still streams) waits for
 * the end of that line, or of the round.
 *
 * A model's reasoning is not the answer and can run to thousands of characters: it is shown
 * collapsed, as one (dim, on a terminal) `thinking… (N chars)` line that grows no further than
 * its count; `agent-lab show --reasoning` prints the text. A refusal is marked as one.
 */
export class TurnPrinter {
  readonly #io: CliIo;
  #atLineStart = true;
  #waiting: string[] = [];
  readonly #names = new Map<string, string>();
  /** The reasoning being streamed: its length, and whether its line is open on the screen. */
  #thinking: { chars: number; open: boolean } | null = null;
  #refusing = false;
  readonly #dim: { on: string; off: string };

  constructor(io: CliIo) {
    this.#io = io;
    const styled = io.stdout.isTTY === true && !io.env.NO_COLOR;
    this.#dim = styled ? { on: "\x1b[2m", off: "\x1b[22m" } : { on: "", off: "" };
  }

  print(event: TurnEvent): void {
    if (event.type === "reasoning_delta") {
      this.#reasoning(event.text);
      return;
    }
    this.#endThinking();
    switch (event.type) {
      case "round_start":
        this.#refusing = false;
        break;
      case "refusal_delta":
        if (!this.#refusing) {
          this.#refusing = true;
          this.#endBlock();
          this.#io.stdout.write("refusal: ");
          this.#atLineStart = false;
        }
        this.#text(event.text);
        break;
      case "text_delta":
        this.#text(event.text);
        break;
      case "tool_call":
        this.#names.set(event.event.id, event.event.name);
        this.#line(`  → ${event.event.name} ${argumentsText(event.event)}`);
        break;
      case "fallback_start":
        this.#line(`  ↻ fallback for ${event.event_name}: ${truncate(event.reason, DETAIL_WIDTH)}`);
        break;
      case "fallback_end": {
        const name = this.#names.get(event.event_id) ?? event.event_id;
        this.#line(
          event.ok && event.event
            ? `  ↻ fallback for ${name} repaired: ${argumentsText(event.event)}`
            : `  ↻ fallback for ${name} failed: ${truncate(event.error ?? "", DETAIL_WIDTH)}`,
        );
        break;
      }
      case "tool_result": {
        const outcome = event.ok ? "ok" : "error";
        const fallback = event.used_fallback ? " (after fallback)" : "";
        const error = event.ok ? "" : `: ${truncate(toolError(event.content), DETAIL_WIDTH)}`;
        this.#line(
          `  ← ${event.event_name} ${outcome} ${formatMs(event.latency_ms)}${fallback}${error}`,
        );
        break;
      }
      case "approval_required":
        this.#line(`  ? ${event.event_name} waits for approval`);
        break;
      case "approval_decided": {
        const verdict = event.decision === "approve" ? "✓ approved" : "✗ denied";
        const edited =
          event.arguments === null
            ? ""
            : ` with ${truncate(JSON.stringify(event.arguments), DETAIL_WIDTH)}`;
        const reason = event.reason ? `: ${truncate(event.reason, DETAIL_WIDTH)}` : "";
        this.#line(
          `  ${verdict} ${event.event_name} by ${event.decided_by}${edited} (waited ${formatMs(event.wait_ms)})${reason}`,
        );
        break;
      }
      case "retry": {
        const status = event.status === null ? "" : `, status ${event.status}`;
        this.#line(
          `  ⟳ retry of the ${event.agent} (attempt ${event.attempt}${status}, in ${formatMs(event.delay_ms)}): ${truncate(event.reason, DETAIL_WIDTH)}`,
        );
        break;
      }
      case "round_end":
      case "error":
        this.#refusing = false;
        this.#endBlock();
        break;
      // The header and the footer say these (reasoning_delta is streamed above).
      case "turn_start":
      case "usage":
      case "turn_end":
        break;
      default:
        // A new event type fails to compile here until the printer decides what it shows.
        event satisfies never;
    }
  }

  /**
   * The footer: who, how it ended, what it cost. `brief` leaves out the session and the simulated
   * label, for `chat`, whose banner says both once.
   */
  footer(report: TurnReport, { brief = false }: { brief?: boolean } = {}): void {
    this.#endThinking();
    this.#endBlock();
    const { usage } = report;
    const details = [
      ...(usage.cached_tokens > 0 ? [`${formatCount(usage.cached_tokens)} cached`] : []),
      ...(usage.reasoning_tokens > 0 ? [`${formatCount(usage.reasoning_tokens)} reasoning`] : []),
    ];
    const detail = details.length > 0 ? ` (${details.join(", ")})` : "";
    const parts = [
      ...(brief ? [] : [`session ${report.session_id}`]),
      `turn ${report.turn_index}`,
      report.status,
      `${formatCount(usage.total_tokens)} tokens${detail}${usage.estimated_count > 0 ? " (estimated)" : ""}`,
      ...footerCost(usage),
      `${usage.call_count} ${usage.call_count === 1 ? "call" : "calls"}`,
      `TTFT ${formatMs(report.ttft_ms)}`,
      `wall ${formatMs(report.wall_time_ms)}`,
    ];
    const simulated = report.simulated && !brief ? " (simulated model)" : "";
    this.#io.stdout.write(`\n── ${terminalSafe(parts.join(" · "))}${simulated}\n`);
  }

  #reasoning(text: string): void {
    if (this.#thinking === null) {
      // Reasoning that starts mid-line (after answer text) gets its line when it ends.
      const open = this.#atLineStart;
      if (open) {
        this.#io.stdout.write(`${this.#dim.on}  thinking…`);
        this.#atLineStart = false;
      }
      this.#thinking = { chars: 0, open };
    }
    this.#thinking.chars += text.length;
  }

  #endThinking(): void {
    const thinking = this.#thinking;
    if (thinking === null) return;
    this.#thinking = null;
    const count = `(${formatCount(thinking.chars)} chars)`;
    if (!thinking.open) {
      this.#line(`  thinking… ${count}`);
      return;
    }
    this.#io.stdout.write(` ${count}${this.#dim.off}\n`);
    this.#atLineStart = true;
    this.#flush();
  }

  #text(raw: string): void {
    // The model's text: escape sequences in it are shown, never obeyed.
    const text = terminalSafe(raw);
    if (text.length === 0) return;
    const lastBreak = text.lastIndexOf("\n");
    if (lastBreak === -1 || this.#waiting.length === 0) {
      this.#io.stdout.write(text);
      this.#atLineStart = text.endsWith("\n");
      if (this.#atLineStart) this.#flush();
      return;
    }
    // A line ends inside this delta: the waiting tool lines go right after it.
    this.#io.stdout.write(text.slice(0, lastBreak + 1));
    this.#atLineStart = true;
    this.#flush();
    this.#text(text.slice(lastBreak + 1));
  }

  #line(unsafe: string): void {
    // Tool names, arguments and endpoint messages come from models and endpoints.
    const line = terminalSafe(unsafe);
    if (this.#atLineStart) this.#io.stdout.write(`${line}\n`);
    else this.#waiting.push(line);
  }

  #endBlock(): void {
    if (!this.#atLineStart) {
      this.#io.stdout.write("\n");
      this.#atLineStart = true;
    }
    this.#flush();
  }

  #flush(): void {
    for (const line of this.#waiting) this.#io.stdout.write(`${line}\n`);
    this.#waiting = [];
  }
}

function argumentsText(event: {
  arguments: Record<string, unknown>;
  raw_arguments: string;
}): string {
  const parsedNothing =
    Object.keys(event.arguments).length === 0 && event.raw_arguments.trim() !== "{}";
  // Arguments that never parsed are shown as the model wrote them.
  const text = parsedNothing
    ? event.raw_arguments.trim() || "(no arguments)"
    : JSON.stringify(event.arguments);
  return truncate(text, DETAIL_WIDTH);
}

function toolError(content: string): string {
  try {
    const parsed = TOOL_ERROR.safeParse(JSON.parse(content));
    return parsed.success ? parsed.data.error : content;
  } catch {
    return content;
  }
}

/** The footer's cost: with its source; said in words when unknown; left out without model calls. */
function footerCost(usage: TurnReport["usage"]): string[] {
  if (usage.cost_usd !== null) return [rollupCostText(usage)];
  return usage.unpriced_count > 0 ? ["cost unknown"] : [];
}
