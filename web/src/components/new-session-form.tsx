import { type FormEvent, useEffect, useId, useState } from "react";
import { api } from "../api.js";
import {
  BUILTIN_TOOLS,
  type NewSessionConfig,
  type ToolInvocationMode,
  type ToolListing,
} from "../api-types.js";
import { isSimulatedModel, modeLabel } from "../format.js";
import { parseJsonInput } from "../json-input.js";
import { navigate, sessionHref } from "../router.js";
import { EndpointFields, useEndpoint } from "./endpoint-fields.js";
import { ErrorNotice } from "./status.js";

const MODE_HINTS: Record<ToolInvocationMode, string> = {
  dual_agent: "the chat agent writes <event> tags; an event agent repairs bad arguments",
  chat_agent_tools: "native function calling; invalid arguments go back to the model",
};

/** The simulated model's timings that look like a small hosted model (see sim-options.ts). */
const SIM_REALISTIC_TIMING = { first_token_ms: 300, tokens_per_second: 80 } as const;

function withSimOptions(
  model: string,
  options: Record<string, number>,
): NewSessionConfig["chat_agent"] {
  return isSimulatedModel(model) && Object.keys(options).length > 0
    ? { model, options }
    : { model };
}

const DECLARED_TOOLS_EXAMPLE = `[{"name": "lookup_order", "description": "Look an order up",
  "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
  "mock": {"cases": [{"when": {"order_id": "A1"}, "result": {"status": "shipped"}}],
           "default": {"error": "no such order"}}}]`;

/** What an upstream without a key variable is given, as the gateway does: never set, so no key. */
const NO_KEY_ENV = "AGENT_LAB_GATEWAY_NO_KEY";

/**
 * Creates a session and opens it. Defaults: the simulated model, both built-in tools. An `openai:`
 * chat model's endpoint is tested by the server first; a session is created on an endpoint with
 * problems only when the user, shown them, asks again.
 */
export function NewSessionForm() {
  const [title, setTitle] = useState("");
  const [mode, setMode] = useState<ToolInvocationMode>("dual_agent");
  const [chatModel, setChatModel] = useState("sim");
  const [eventModel, setEventModel] = useState("");
  const [tools, setTools] = useState<string[]>([...BUILTIN_TOOLS]);
  const [maxRounds, setMaxRounds] = useState("6");
  const [realisticTiming, setRealisticTiming] = useState(false);
  const [malformedRate, setMalformedRate] = useState("0");
  const [systemPrompt, setSystemPrompt] = useState("");
  const [declaredText, setDeclaredText] = useState("");
  const [available, setAvailable] = useState<ToolListing[] | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const endpoint = useEndpoint();
  const id = useId();

  useEffect(() => {
    const controller = new AbortController();
    // Without the list (an older server, a failure) the built-ins are still offered.
    api.tools(controller.signal).then(
      (response) => setAvailable(response.tools),
      () => {},
    );
    return () => controller.abort();
  }, []);
  const offered: (Pick<ToolListing, "name"> & Partial<ToolListing>)[] =
    available ?? BUILTIN_TOOLS.map((name) => ({ name }));

  const toggleTool = (tool: string, checked: boolean) =>
    setTools((current) => (checked ? [...current, tool] : current.filter((item) => item !== tool)));

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    // Empty, or a JSON array whose items the server checks.
    const declared = declaredText.trim() === "" ? null : parseJsonInput(declaredText, "array");
    if (declared && "error" in declared) {
      setError(new Error(`Declared tools: ${declared.error}`));
      return;
    }
    const chat = chatModel.trim() || "sim";
    const remote = chat.startsWith("openai:");
    if (remote && !endpoint.check?.ok) {
      // Checked now unless a check of this very endpoint already showed its problems: then this
      // second click is the user's "create anyway".
      const shown = endpoint.check !== null && endpoint.check.model === chat.slice(7);
      if (!shown) {
        setBusy(true);
        const result = await endpoint.runCheck(chat);
        setBusy(false);
        if (result === null || !result.ok) return;
      }
    }
    setBusy(true);
    const rounds = Number.parseInt(maxRounds, 10);
    const chosen = endpoint.upstreams.find((item) => item.name === endpoint.upstream);
    const where = !remote
      ? {}
      : chosen
        ? { base_url: chosen.base_url, api_key_env: chosen.api_key_env ?? NO_KEY_ENV }
        : {
            ...(endpoint.baseUrl.trim() ? { base_url: endpoint.baseUrl.trim() } : {}),
            ...(endpoint.keyEnv.trim() ? { api_key_env: endpoint.keyEnv.trim() } : {}),
          };
    // Left empty, the event agent follows the chat agent (as a config without one does).
    const eventAgent = eventModel.trim() || chat;
    const rate = Number.parseFloat(malformedRate);
    const config: NewSessionConfig = {
      tool_invocation_mode: mode,
      chat_agent: {
        ...withSimOptions(chat, {
          ...(realisticTiming ? SIM_REALISTIC_TIMING : {}),
          ...(Number.isFinite(rate) && rate > 0 ? { malformed_arguments_rate: rate } : {}),
        }),
        ...where,
        ...(systemPrompt.trim() ? { system_prompt: systemPrompt } : {}),
      },
      event_agent: {
        ...withSimOptions(eventAgent, realisticTiming ? SIM_REALISTIC_TIMING : {}),
        // Left empty, the event agent is the chat agent on the same endpoint.
        ...(eventModel.trim() ? {} : where),
      },
      tools: offered.map((tool) => tool.name).filter((tool) => tools.includes(tool)),
      ...(declared ? { declared_tools: declared.value as unknown[] } : {}),
      ...(Number.isFinite(rounds) ? { max_rounds: rounds } : {}),
    };
    try {
      const { session } = await api.createSession(title.trim() || "Untitled session", config);
      navigate(sessionHref(session.id));
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  };

  return (
    <form
      className="card new-session"
      data-testid="new-session-form"
      onSubmit={onSubmit}
      aria-labelledby={`${id}-heading`}
    >
      <h2 id={`${id}-heading`}>New session</h2>
      <div className="form-grid">
        <div className="field field-wide">
          <label htmlFor={`${id}-title`}>Title</label>
          <input
            id={`${id}-title`}
            name="title"
            data-testid="new-session-title"
            value={title}
            placeholder="e.g. Search then ticket, dual agent"
            onChange={(event) => setTitle(event.target.value)}
          />
        </div>
        <div className="field field-wide">
          <label htmlFor={`${id}-mode`}>Tool invocation mode</label>
          <select
            id={`${id}-mode`}
            name="mode"
            data-testid="new-session-mode"
            value={mode}
            onChange={(event) => setMode(event.target.value as ToolInvocationMode)}
            aria-describedby={`${id}-mode-hint`}
          >
            <option value="dual_agent">{modeLabel("dual_agent")} (dual_agent)</option>
            <option value="chat_agent_tools">
              {modeLabel("chat_agent_tools")} (chat_agent_tools)
            </option>
          </select>
          <small id={`${id}-mode-hint`} className="muted">
            {MODE_HINTS[mode]}
          </small>
        </div>
        <div className="field">
          <label htmlFor={`${id}-chat`}>Chat model</label>
          <input
            id={`${id}-chat`}
            name="chat_model"
            data-testid="new-session-chat-model"
            value={chatModel}
            onChange={(event) => setChatModel(event.target.value)}
            aria-describedby={`${id}-model-hint`}
            spellCheck={false}
          />
        </div>
        <div className="field">
          <label htmlFor={`${id}-event`}>Event model</label>
          <input
            id={`${id}-event`}
            name="event_model"
            data-testid="new-session-event-model"
            value={eventModel}
            placeholder="same as the chat model"
            onChange={(event) => setEventModel(event.target.value)}
            aria-describedby={`${id}-model-hint`}
            spellCheck={false}
          />
        </div>
        {chatModel.trim().startsWith("openai:") || endpoint.upstreams.length > 0 ? (
          <EndpointFields id={id} endpoint={endpoint} model={chatModel} onModel={setChatModel} />
        ) : null}
        <div className="field">
          <label htmlFor={`${id}-rounds`}>Max rounds</label>
          <input
            id={`${id}-rounds`}
            name="max_rounds"
            type="number"
            min={1}
            max={50}
            value={maxRounds}
            onChange={(event) => setMaxRounds(event.target.value)}
          />
        </div>
        <fieldset className="field field-wide tools-fieldset">
          <legend>Tools</legend>
          {offered.map(({ name, description, source, requires_approval }) => (
            <label key={name} className="checkbox" title={description}>
              <input
                type="checkbox"
                name="tools"
                value={name}
                checked={tools.includes(name)}
                onChange={(event) => toggleTool(name, event.target.checked)}
              />
              <code>{name}</code>
              {source && source !== "builtin" ? (
                <span className="muted small"> ({source})</span>
              ) : null}
              {requires_approval ? <span className="muted small"> · needs approval</span> : null}
            </label>
          ))}
        </fieldset>
        <div className="field field-wide">
          <label htmlFor={`${id}-system`}>System prompt (chat agent)</label>
          <textarea
            id={`${id}-system`}
            name="system_prompt"
            data-testid="new-session-system-prompt"
            rows={3}
            value={systemPrompt}
            placeholder="empty: the mode's default prompt"
            onChange={(event) => setSystemPrompt(event.target.value)}
          />
          <small className="muted">In dual_agent the event catalog is appended to it.</small>
        </div>
        <div className="field field-wide">
          <label htmlFor={`${id}-declared`}>Declared tools (JSON array, optional)</label>
          <textarea
            id={`${id}-declared`}
            name="declared_tools"
            data-testid="new-session-declared-tools"
            rows={4}
            value={declaredText}
            placeholder={DECLARED_TOOLS_EXAMPLE}
            spellCheck={false}
            onChange={(event) => setDeclaredText(event.target.value)}
          />
          <small className="muted">
            Mock tools offered beside the ones ticked above: a fixed result, an error, or cases.
          </small>
        </div>
      </div>
      <details className="sim-options">
        <summary>Simulated model options</summary>
        <p className="muted small">Applied to agents whose model is simulated.</p>
        <label className="checkbox">
          <input
            type="checkbox"
            checked={realisticTiming}
            onChange={(event) => setRealisticTiming(event.target.checked)}
          />
          Realistic timing (first token after 300 ms, 80 tokens/s)
        </label>
        <div className="field">
          <label htmlFor={`${id}-malformed`}>Malformed tool-argument rate (0–1, chat agent)</label>
          <input
            id={`${id}-malformed`}
            type="number"
            min={0}
            max={1}
            step={0.1}
            value={malformedRate}
            onChange={(event) => setMalformedRate(event.target.value)}
          />
        </div>
      </details>
      <p id={`${id}-model-hint`} className="muted small">
        Models: <code>sim</code> or <code>sim:NAME</code> (simulated, offline),{" "}
        <code>openai:MODEL</code> (any OpenAI-compatible endpoint; keys come from the server's
        environment).
      </p>
      {error ? <ErrorNotice error={error} title="Could not create the session" /> : null}
      <div className="form-actions">
        <button
          type="submit"
          className="button button-primary"
          data-testid="create-session"
          disabled={busy}
        >
          {busy
            ? "Creating…"
            : endpoint.check && !endpoint.check.ok
              ? "Create anyway"
              : "Create session"}
        </button>
      </div>
    </form>
  );
}
