/**
 * A filtered, cursor-paged list page: the filters live in the URL (so reload,
 * Back and shared links keep them), the first page is fetched whenever they
 * change, and "Load more" follows the API's nextCursor. One hook for every
 * list page, so each page only says how its filters become an API path; lists
 * without filters page through usePages alone.
 */
import type { FormEvent } from "react";
import { api, type PagedPath, type PageItem, type Query } from "./client.ts";
import { useAction } from "./action.ts";
import { useLoad } from "./load.ts";
import { navigate, useLocation } from "./router.tsx";

export function useFilteredList<P extends PagedPath>(
  /** The page's own path, e.g. /ui/collectors. */
  base: string,
  /** The URL query keys the filter form sets. */
  keys: readonly string[],
  /** The API list it pages through. */
  path: P,
  /** The API query for these filters and cursor (null: the first page). */
  apiQuery: (filters: URLSearchParams, cursor: string | null) => Query,
) {
  const { search } = useLocation();
  // The filters as one string: a stable effect dependency and the form's key (so it resets on Back).
  // A key may repeat (one `match` per matcher): every value is kept, in order.
  const filterKey = new URLSearchParams(
    keys.flatMap((k) => {
      const values = search.getAll(k);
      return values.length === 0 ? [[k, ""]] : values.map((v) => [k, v]);
    }),
  ).toString();
  const filtered = keys.some((k) => search.has(k));
  const pages = usePages(path, (cursor) => apiQuery(new URLSearchParams(filterKey), cursor), filterKey, true);

  function onFilter(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const query = new URLSearchParams();
    for (const key of keys) {
      for (const entry of form.getAll(key)) {
        const value = String(entry).trim();
        if (value !== "") query.append(key, value);
      }
    }
    const qs = query.toString();
    navigate(qs === "" ? base : `${base}?${qs}`);
  }

  return { search, filterKey, filtered, ...pages, onFilter };
}

/** One empty list before the first page, so what is derived from the items is not rebuilt each render. */
const NO_ITEMS: never[] = [];

/**
 * A cursor-paged API list: the first page is fetched whenever `key` changes
 * (an answer to an earlier key that arrives late is dropped), and loadMore
 * follows the API's nextCursor. `filtered`: the key is a filter, so a new key
 * starts without the old error, and a first page that fails leaves the list
 * empty rather than showing rows of the previous filter.
 */
export function usePages<P extends PagedPath>(path: P, query: (cursor: string | null) => Query, key: string, filtered = false) {
  const first = useLoad(() => pageOf(path, query(null)), key, filtered ? { reset: "error", clearOnError: true } : {});
  const more = useAction();

  function loadMore() {
    const cursor = first.data?.nextCursor ?? null;
    if (cursor === null) return;
    more.run(
      () => pageOf(path, query(cursor)),
      (page) => {
        first.setData((before) => ({ items: [...(before?.items ?? []), ...page.items], nextCursor: page.nextCursor }));
        first.setError(null);
      },
      first.setError,
    );
  }

  const items = first.data?.items ?? (NO_ITEMS as PageItem<P>[]);
  const nextCursor = first.data?.nextCursor ?? null;
  const loading = first.pending || more.busy;
  const { error, setError } = first;
  return { items, nextCursor, error, setError, loading, loadMore };
}

/** A page of one of the paged lists, typed by its items. */
function pageOf<P extends PagedPath>(path: P, query: Query): Promise<{ items: PageItem<P>[]; nextCursor: string | null }> {
  return (api.get as unknown as (path: PagedPath, options: { query: Query }) => Promise<{ items: PageItem<P>[]; nextCursor: string | null }>)(path, { query });
}
