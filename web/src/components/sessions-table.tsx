import type { SessionPageItem } from "../api-types.js";
import { SessionRow } from "./session-row.js";

/** The loaded sessions, one memoized row each. */
export function SessionsTable({
  sessions,
  selectedIds,
  deleting,
  onToggle,
  onDelete,
  onTag,
  busy,
}: {
  sessions: readonly SessionPageItem[];
  /** The rows are the previous filters' while the new list loads. */
  busy: boolean;
  selectedIds: ReadonlySet<string>;
  deleting: string | null;
  onToggle: (session: SessionPageItem, checked: boolean) => void;
  onDelete: (session: SessionPageItem) => void;
  onTag: (tag: string) => void;
}) {
  return (
    <div className="table-scroll">
      <table className="data-table sessions-table" data-testid="sessions-table" aria-busy={busy}>
        <caption className="visually-hidden">Sessions, most recently updated first</caption>
        <thead>
          <tr>
            <th scope="col">
              <span className="visually-hidden">Compare</span>
            </th>
            <th scope="col">Title</th>
            <th scope="col">Mode · models</th>
            <th scope="col">Last turn</th>
            <th scope="col" className="num">
              Turns
            </th>
            <th scope="col" className="num">
              Tokens
            </th>
            <th scope="col">Last update</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {sessions.map((session) => (
            <SessionRow
              key={session.id}
              session={session}
              selected={selectedIds.has(session.id)}
              deleting={deleting === session.id}
              onToggle={onToggle}
              onDelete={onDelete}
              onTag={onTag}
            />
          ))}
        </tbody>
      </table>
    </div>
  );
}
