import type { Tool } from "../tool.js";
import { latencyOption, simulateLatency, stableHash, stringArgument } from "./support.js";

/**
 * `mock_ticket`: a pretend issue tracker. The ticket number is derived from the title, so the same
 * title always gives the same ticket, and nothing is stored anywhere.
 */

export const MOCK_TICKET_NAME = "mock_ticket";
export const TICKET_PRIORITIES = ["low", "normal", "high"] as const;
export type TicketPriority = (typeof TICKET_PRIORITIES)[number];

export interface MockTicketOutput {
  ticket_id: string;
  title: string;
  priority: TicketPriority;
  status: "open";
  url: string;
}

export interface MockTicketOptions {
  /** Artificial latency of every call in milliseconds (default 0); the call's signal cuts it short. */
  latency_ms?: number;
}

export function createMockTicketTool(options: MockTicketOptions = {}): Tool {
  const latencyMs = latencyOption(options.latency_ms, MOCK_TICKET_NAME);
  return {
    name: MOCK_TICKET_NAME,
    // Filing a ticket is a side effect: a prompt injection must not do it unasked (OWASP LLM01).
    requires_approval: true,
    description:
      "Create a ticket in the issue tracker (a bug report, task or support request) and return " +
      "its id, status and url. Use it when the user asks to file, open or report a ticket or issue.",
    parameters: {
      type: "object",
      properties: {
        title: {
          type: "string",
          minLength: 1,
          description: "A one-line summary of the problem or request.",
        },
        priority: {
          type: "string",
          enum: [...TICKET_PRIORITIES],
          description: 'How urgent the ticket is: "low", "normal" or "high" (default "normal").',
        },
        body: {
          type: "string",
          description: "Optional details: steps to reproduce, context, expected behaviour.",
        },
      },
      required: ["title"],
      additionalProperties: false,
    },
    async execute(args, { signal }) {
      const title = stringArgument(args, "title");
      const priority = priorityOf(args.priority);
      await simulateLatency(latencyMs, signal);
      return mockTicket(title, priority);
    },
  };
}

/** The ticket `mock_ticket` returns: a pure function of its arguments. */
export function mockTicket(title: string, priority: TicketPriority = "normal"): MockTicketOutput {
  const number = 100_000 + (Number.parseInt(stableHash(title.trim()), 16) % 900_000);
  const ticket_id = `TCK-${number}`;
  return {
    ticket_id,
    title,
    priority,
    status: "open",
    url: `https://example.com/tickets/${ticket_id}`,
  };
}

function priorityOf(value: unknown): TicketPriority {
  if (value === undefined) return "normal";
  const priority = TICKET_PRIORITIES.find((candidate) => candidate === value);
  if (priority === undefined) {
    throw new Error(`priority: must be one of ${TICKET_PRIORITIES.join(", ")}`);
  }
  return priority;
}
