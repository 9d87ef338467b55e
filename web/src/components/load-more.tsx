import type { ReactNode } from "react";
import type { PagedList } from "../use-paged-list.js";
import { ErrorNotice } from "./status.js";

/**
 * Under a paged list: what it shows (`children`), why the last page failed, and the button that
 * reads the next page while there is one.
 */
export function LoadMore({
  list,
  pageSize,
  what,
  testId,
  children,
}: {
  list: Pick<PagedList<unknown>, "error" | "hasMore" | "loading" | "loadMore">;
  pageSize: number;
  /** The items, plural: "sessions", "calls". */
  what: string;
  testId: string;
  children?: ReactNode;
}) {
  if (children === undefined && !list.error && !list.hasMore) return null;
  return (
    <div className="list-footer">
      {children}
      {list.error ? <ErrorNotice error={list.error} title={`Could not load more ${what}`} /> : null}
      {list.hasMore ? (
        <button
          type="button"
          className="button button-small"
          data-testid={testId}
          onClick={list.loadMore}
          // Not `disabled`: a disabled button loses the keyboard focus, and the next Enter with
          // it. A click while a page is on its way does nothing (loadMore ignores it).
          aria-disabled={list.loading}
        >
          {list.loading ? "Loading…" : `Load ${pageSize} more`}
        </button>
      ) : null}
    </div>
  );
}
