/**
 * The live line above a cursor-paged list: loading, the empty or no-match
 * message, or how many are shown ("+" while the cursor has more). Quiet
 * after an error, which ErrorMessage already says.
 */
import type { ApiError } from "../api.ts";

interface ListSummaryProps {
  loading: boolean;
  error: ApiError | null;
  count: number;
  /** The API has another page. */
  more: boolean;
  /** Filters are set: an empty list is "no match", not "none yet". */
  filtered: boolean;
  /** Singular and plural, e.g. ["host", "hosts"]. */
  noun: readonly [string, string];
  empty: string;
  noMatch: string;
}

export function ListSummary({ loading, error, count, more, filtered, noun, empty, noMatch }: ListSummaryProps) {
  const text = loading
    ? "Loading…"
    : error
      ? ""
      : count === 0
        ? filtered
          ? noMatch
          : empty
        : `Showing ${count}${more ? "+" : ""} ${count === 1 ? noun[0] : noun[1]}.`;
  return (
    <p className="muted" aria-live="polite">
      {text}
    </p>
  );
}
