import { useId } from "react";
import { TOOL_INVOCATION_MODES } from "../api-types.js";
import type { ConfigChanges } from "../config-overrides.js";
import { agentModels, modeLabel } from "../format.js";

/** Title, mode, chat model and prompt of a derived session; empty fields keep the source's. */
export function ConfigChangeFields({
  source,
  title,
  onTitle,
  changes,
  onChange,
  testIdPrefix,
}: {
  source: Record<string, unknown>;
  title: string;
  onTitle: (title: string) => void;
  changes: ConfigChanges;
  onChange: (changes: ConfigChanges) => void;
  testIdPrefix: string;
}) {
  const id = useId();
  const sourceMode = String(source.tool_invocation_mode ?? "");
  const sourceModel = agentModels(source).chat;
  const chat = (source.chat_agent ?? {}) as { system_prompt?: unknown };
  const sourcePrompt = typeof chat.system_prompt === "string" ? chat.system_prompt : "";
  return (
    <div className="form-grid">
      <div className="field field-wide">
        <label htmlFor={`${id}-title`}>Title</label>
        <input
          id={`${id}-title`}
          data-testid={`${testIdPrefix}-title`}
          value={title}
          placeholder="the server names it after the source"
          onChange={(event) => onTitle(event.target.value)}
        />
      </div>
      <div className="field">
        <label htmlFor={`${id}-mode`}>Tool invocation mode</label>
        <select
          id={`${id}-mode`}
          data-testid={`${testIdPrefix}-mode`}
          value={changes.mode || sourceMode}
          onChange={(event) => onChange({ ...changes, mode: event.target.value })}
        >
          {TOOL_INVOCATION_MODES.map((mode) => (
            <option key={mode} value={mode}>
              {modeLabel(mode)}
              {mode === sourceMode ? " (as now)" : ""}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={`${id}-model`}>Chat model</label>
        <input
          id={`${id}-model`}
          data-testid={`${testIdPrefix}-model`}
          value={changes.chat_model}
          placeholder={`${sourceModel} (as now)`}
          spellCheck={false}
          onChange={(event) => onChange({ ...changes, chat_model: event.target.value })}
        />
      </div>
      <div className="field field-wide">
        <label htmlFor={`${id}-prompt`}>Chat agent's system prompt</label>
        <textarea
          id={`${id}-prompt`}
          data-testid={`${testIdPrefix}-prompt`}
          rows={3}
          value={changes.system_prompt ?? sourcePrompt}
          placeholder="the mode's default prompt"
          onChange={(event) => onChange({ ...changes, system_prompt: event.target.value })}
        />
      </div>
    </div>
  );
}
