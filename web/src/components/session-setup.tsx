import type { AuditRecord } from "../api-types.js";

/**
 * What the chat agent was actually given: the system message and the tools of the latest turn, as
 * its `turn_start` audit entry recorded them (dual_agent's system message holds the event
 * catalog). Before any turn, what the config says.
 */
export function SessionSetup({
  config,
  audit,
}: {
  config: Record<string, unknown>;
  audit: readonly AuditRecord[];
}) {
  const start = audit.findLast((entry) => entry.event === "turn_start");
  const details = (start?.details ?? {}) as { system_prompt?: unknown; tools?: unknown };
  const recorded = typeof details.system_prompt === "string" ? details.system_prompt : null;
  const chat = (config.chat_agent ?? {}) as { system_prompt?: unknown };
  const configured = typeof chat.system_prompt === "string" ? chat.system_prompt : null;
  const tools = Array.isArray(details.tools) ? details.tools.map(String) : configuredTools(config);
  const source = recorded !== null ? "as sent" : configured !== null ? "configured" : "default";
  return (
    <section className="session-setup" data-testid="session-setup" aria-label="Agent setup">
      <div className="session-tools">
        <span className="muted small">Tools in use{start ? "" : " (configured)"}:</span>{" "}
        {tools.length === 0 ? (
          <span className="muted small">none</span>
        ) : (
          tools.map((name) => (
            <code key={name} className="tool-chip" data-testid="session-tool">
              {name}
            </code>
          ))
        )}
      </div>
      <details className="sim-options" data-testid="system-prompt">
        <summary>System prompt ({source})</summary>
        <pre className="system-prompt" data-testid="system-prompt-text">
          {recorded ??
            configured ??
            "The mode's default prompt; it is shown as sent after the first turn."}
        </pre>
      </details>
    </section>
  );
}

function configuredTools(config: Record<string, unknown>): string[] {
  const selected = Array.isArray(config.tools) ? config.tools.map(String) : [];
  const declared = Array.isArray(config.declared_tools)
    ? config.declared_tools.map((tool) => String((tool as { name?: unknown }).name))
    : [];
  return [...selected, ...declared];
}
