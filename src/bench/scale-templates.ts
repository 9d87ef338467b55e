import { runTurn } from "../composition/run-turn.js";
import type { TurnEvent } from "../domain/turn-events.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";

/**
 * The sessions every scale database is cloned from: a few dozen real sessions written through the
 * store and the runtime (sim model turns, and hand-written turns for the states a sim turn does not
 * reach), so the clones carry exactly the rows, configs and derived columns the lab writes itself.
 * Their variety (modes, models, tags, experiments, last status) is what the list filters select.
 */

export const TEMPLATE_COUNT = 48;

export const TEMPLATE_TITLES = [
  "Checkout bug triage",
  "WAL mode research",
  "Release notes draft",
  "Flaky test hunt",
  "Pricing page review",
  "Onboarding questions",
] as const;

export const TEMPLATE_TAGS: readonly (readonly string[])[] = [
  [],
  ["prod"],
  ["eval", "regression"],
  ["draft"],
  ["prod", "nightly"],
];

const SIM_MODELS = ["sim", "sim:fast", "sim:careful"] as const;
const OPENAI_MODELS = ["openai:gpt-4.1-mini", "openai:gpt-4.1-nano", "openai:llama3.1"] as const;

/** What a template's last turn ended as; "none" has no turns. */
export type TemplateStatus =
  | "completed"
  | "max_rounds"
  | "failed"
  | "cancelled"
  | "running"
  | "none";

export interface TemplateShape {
  title: string;
  mode: "dual_agent" | "chat_agent_tools";
  chat_model: string;
  tags: readonly string[];
  /** Tagged as a run of an experiment (its id is rewritten per clone). */
  experiment: boolean;
  status: TemplateStatus;
}

/** The shape of template `index`: a fixed mix, so every filter matches a known share of clones. */
export function templateShape(index: number): TemplateShape {
  const openai = index % 4 === 3;
  const statusBySlot: TemplateStatus[] = [
    "completed",
    "completed",
    "max_rounds",
    "completed",
    "completed",
    "cancelled",
    "running",
    "none",
  ];
  let status = statusBySlot[index % 8] as TemplateStatus;
  // An openai model would need a live endpoint: its turns are the failed ones a missing server leaves.
  if (openai && (status === "completed" || status === "max_rounds")) status = "failed";
  return {
    title: TEMPLATE_TITLES[index % TEMPLATE_TITLES.length] as string,
    mode: index % 2 === 0 ? "dual_agent" : "chat_agent_tools",
    chat_model: openai
      ? (OPENAI_MODELS[index % OPENAI_MODELS.length] as string)
      : (SIM_MODELS[index % SIM_MODELS.length] as string),
    tags: TEMPLATE_TAGS[index % TEMPLATE_TAGS.length] as readonly string[],
    experiment: index % 6 === 5,
    status,
  };
}

function configOf(shape: TemplateShape, index: number): Record<string, unknown> {
  const agent = shape.chat_model.startsWith("openai:")
    ? {
        model: shape.chat_model,
        base_url: "http://127.0.0.1:11434/v1",
        api_key_env: "OPENAI_API_KEY",
        system_prompt: "You are a careful assistant that uses tools when they help.",
        options: {},
      }
    : { model: shape.chat_model, options: {} };
  const config: Record<string, unknown> = {
    tool_invocation_mode: shape.mode,
    chat_agent: agent,
    event_agent: { ...agent },
    tools: ["mock_search", "mock_ticket"],
    max_rounds: shape.status === "max_rounds" ? 1 : 6,
    tags: [...shape.tags],
  };
  if (shape.experiment) {
    const cell = `${shape.mode} · ${shape.chat_model} · ${shape.chat_model}`;
    config.experiment = {
      id: "exp-template",
      suite: "nightly",
      cell,
      cell_label: cell,
      scenario: "simple-search",
      category: "simple",
      repetition: 1,
      run_key: `${cell}/simple-search/${index}`,
      expect: [
        {
          tools: [{ name: "mock_search", arguments: {} }],
          no_tools: false,
          answer_contains: [],
        },
      ],
    };
  }
  return config;
}

async function drain(events: AsyncIterable<TurnEvent>): Promise<void> {
  for await (const _event of events) {
    // Only the stored rows matter.
  }
}

const RUNNER = `${process.pid}@scale-fixture`;

/** A turn the runtime never finished or never reached a model in, written as the lab writes it. */
function handWrittenTurn(store: SqliteSessionStore, sessionId: string, shape: TemplateShape): void {
  const { turn_index } = store.claimTurn(sessionId, {
    user_message: "search for the release checklist",
    runner: RUNNER,
  });
  store.appendAudit(sessionId, {
    event: "turn_start",
    turn_index,
    details: { mode: shape.mode, chat_model: shape.chat_model, max_rounds: 6 },
  });
  store.appendAudit(sessionId, { event: "chat_agent_request", turn_index, round_index: 1 });
  if (shape.status === "running") return;
  if (shape.status === "failed") {
    store.appendAudit(sessionId, {
      event: "turn_failed",
      turn_index,
      details: { code: "provider_unreachable", message: "connect ECONNREFUSED 127.0.0.1:11434" },
    });
  }
  store.completeTurn(sessionId, {
    turn_index,
    wall_time_ms: 12,
    status: shape.status === "failed" ? "failed" : "cancelled",
  });
}

/** Writes the TEMPLATE_COUNT template sessions into a fresh file at `path`; returns their ids. */
export async function writeTemplates(path: string): Promise<string[]> {
  const store = new SqliteSessionStore(path);
  const ids: string[] = [];
  try {
    for (let index = 0; index < TEMPLATE_COUNT; index++) {
      const shape = templateShape(index);
      const id = store.createSession({
        title: shape.title,
        config: configOf(shape, index),
        session_id: `template-${String(index).padStart(2, "0")}`,
      });
      ids.push(id);
      if (shape.status === "completed" || shape.status === "max_rounds") {
        await drain(runTurn({ store, session_id: id, message: "search for sqlite wal mode" }));
        if (shape.status === "completed") {
          await drain(runTurn({ store, session_id: id, message: "thanks, that is all" }));
        }
      } else if (shape.status !== "none") {
        handWrittenTurn(store, id, shape);
      }
    }
  } finally {
    store.close();
  }
  return ids;
}
