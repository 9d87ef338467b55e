import { memo } from "react";
import type { SessionPageItem } from "../api-types.js";
import { formatDateTimeParts, formatInt } from "../format.js";
import { isGatewaySession } from "../gateway-mark.js";
import { Link, sessionHref } from "../router.js";
import { GatewayBadge, ModeBadge, SimulatedBadge, StatusBadge } from "./status.js";

export interface SessionRowProps {
  session: SessionPageItem;
  selected: boolean;
  deleting: boolean;
  /** Stable across renders (the list passes one callback to every row). */
  onToggle: (session: SessionPageItem, checked: boolean) => void;
  onDelete: (session: SessionPageItem) => void;
  onTag: (tag: string) => void;
}

/**
 * One session of the list. Memoized: its props change only when its own session, tick or delete
 * state does, so ticking a box redraws that row and not the thousands loaded beside it.
 */
export const SessionRow = memo(function SessionRow({
  session,
  selected,
  deleting,
  onToggle,
  onDelete,
  onTag,
}: SessionRowProps) {
  return (
    <tr data-testid="session-row" data-session-id={session.id} aria-selected={selected}>
      <td>
        <input
          type="checkbox"
          data-testid="compare-checkbox"
          aria-label={`Compare "${session.title}"`}
          checked={selected}
          onChange={(event) => onToggle(session, event.target.checked)}
        />
      </td>
      <td className="title-cell">
        <Link to={sessionHref(session.id)} data-testid="session-link">
          {session.title}
        </Link>
        {/* In the title cell, which wraps: the setup cell does not, and the row would overflow.
            The list knows tags, not configs, so the tooltip is the general one; the session page
            says which upstream. */}
        {isGatewaySession(session.tags) ? (
          <>
            {" "}
            <GatewayBadge mark={null} />
          </>
        ) : null}
        {session.tags.length > 0 ? (
          <span className="session-tags">
            {session.tags.map((tag) => (
              <button
                key={tag}
                type="button"
                className="tag-chip"
                data-testid="session-tag"
                title={`Show only sessions tagged ${tag}`}
                onClick={() => onTag(tag)}
              >
                {tag}
              </button>
            ))}
          </span>
        ) : null}
      </td>
      <td className="setup-cell">
        <ModeBadge mode={session.tool_invocation_mode} />
        <span className="setup-models">
          <code>{session.chat_model}</code>
          {session.event_model && session.event_model !== session.chat_model ? (
            <>
              {" / "}
              <code>{session.event_model}</code>
            </>
          ) : null}{" "}
          <SimulatedBadge models={[session.chat_model]} />
        </span>
      </td>
      <td className="nowrap" data-testid="session-status">
        {session.last_status ? (
          <StatusBadge status={session.last_status} />
        ) : (
          <span className="muted">no turns</span>
        )}
      </td>
      <td className="num">{formatInt(session.turn_count)}</td>
      <td className="num">{formatInt(session.total_tokens)}</td>
      <td>
        <UpdatedAt iso={session.updated_at} />
      </td>
      <td>
        <button
          type="button"
          className="button button-small button-quiet-danger"
          data-testid="delete-session"
          onClick={() => onDelete(session)}
          disabled={deleting}
          aria-label={`Delete "${session.title}"`}
        >
          {deleting ? "Deleting…" : "Delete"}
        </button>
      </td>
    </tr>
  );
});

/** The day and the time, each kept whole: a narrow window sets them on two lines. */
function UpdatedAt({ iso }: { iso: string }) {
  const [day, time] = formatDateTimeParts(iso);
  return (
    <time dateTime={iso}>
      <span className="nowrap">{day}</span>
      {time === undefined ? null : (
        <>
          {" "}
          <span className="nowrap">{time}</span>
        </>
      )}
    </time>
  );
}
