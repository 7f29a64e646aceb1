/**
 * The collector registry: GET /api/v1/collectors as a table, filtered by
 * status, tag and free text. The filters live in the URL query (status,
 * tag, q), so a reload, a shared link or Back keeps them; "Load more"
 * follows the API's nextCursor.
 */
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { FilterActions } from "../components/FilterActions.tsx";
import { LoadMore } from "../components/LoadMore.tsx";
import { LastSeen } from "../components/LastSeen.tsx";
import { StatusBadge } from "../components/StatusBadge.tsx";
import { useFilteredList } from "../list.ts";

export const COLLECTOR_STATUSES = ["pending", "online", "degraded", "offline"] as const;
export type CollectorStatus = (typeof COLLECTOR_STATUSES)[number];

export interface Collector {
  id: string;
  name: string;
  environment: string | null;
  managementMode: "opamp" | "rcfg-remotecfg";
  tags: Record<string, string>;
  status: CollectorStatus;
  lastSeen: string | null;
}

interface CollectorPage {
  items: Collector[];
  nextCursor: string | null;
}

const PAGE_SIZE = 50;

const MODE_LABELS: Record<Collector["managementMode"], string> = { opamp: "OpAMP", "rcfg-remotecfg": "remotecfg" };

/**
 * The tag box as API `tag` values: comma-separated `key=value`, `key:value`
 * or a bare `key` (any value); the API's own syntax is `key:value`.
 */
export function tagFilters(text: string): string[] {
  return text
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .map((part) => {
      const at = part.search(/[=:]/);
      return at === -1 ? part : `${part.slice(0, at).trim()}:${part.slice(at + 1).trim()}`;
    });
}

/** The API query for the filters in the page's URL, plus a cursor. */
function listQuery(search: URLSearchParams, cursor: string | null): string {
  const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
  const status = search.get("status");
  if (status) query.set("status", status);
  for (const tag of tagFilters(search.get("tag") ?? "")) query.append("tag", tag);
  const q = search.get("q")?.trim();
  if (q) query.set("q", q);
  if (cursor !== null) query.set("cursor", cursor);
  return `/collectors?${query}`;
}

export function CollectorsPage() {
  const { search, filterKey, filtered, items, nextCursor, error, loading, loadMore, onFilter } = useFilteredList<Collector>("/ui/collectors", ["status", "tag", "q"], listQuery);


  return (
    <section aria-labelledby="collectors-title">
      <div className="page-head">
        <h1 id="collectors-title">Collectors</h1>
      </div>
      {/* Keyed on the URL's filters, so Back and reload show what is applied. */}
      <form key={filterKey} className="filters" role="search" aria-label="Filter collectors" onSubmit={onFilter}>
        <div className="field">
          <label htmlFor="filter-status">Status</label>
          <select id="filter-status" name="status" defaultValue={search.get("status") ?? ""}>
            <option value="">Any status</option>
            {COLLECTOR_STATUSES.map((status) => (
              <option key={status} value={status}>
                {status}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="filter-tag">Tag</label>
          <input
            id="filter-tag"
            name="tag"
            defaultValue={search.get("tag") ?? ""}
            placeholder="team=payments"
            aria-describedby="filter-tag-hint"
          />
          <span id="filter-tag-hint" className="hint">
            key=value or key; separate several with commas
          </span>
        </div>
        <div className="field grow">
          <label htmlFor="filter-q">Search</label>
          <input id="filter-q" name="q" type="search" defaultValue={search.get("q") ?? ""} placeholder="Name, id or environment" />
        </div>
        <FilterActions filtered={filtered} base="/ui/collectors" />
      </form>
      <ErrorMessage error={error} />
      <p className="muted" aria-live="polite">
        {loading
          ? "Loading…"
          : error
            ? ""
            : items.length === 0
              ? filtered
                ? "No collectors match these filters."
                : "No collectors yet."
              : `Showing ${items.length}${nextCursor !== null ? "+" : ""} collector${items.length === 1 ? "" : "s"}.`}
      </p>
      {items.length > 0 && (
        <div className="table-scroll" role="region" aria-labelledby="collectors-caption" tabIndex={0}>
          <table className="list">
            <caption id="collectors-caption" className="visually-hidden">
              Collectors
            </caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">Last seen</th>
                <th scope="col">Environment</th>
                <th scope="col">Management</th>
                <th scope="col">Tags</th>
              </tr>
            </thead>
            <tbody>
              {items.map((c) => (
                <tr key={c.id}>
                  <th scope="row">
                    <span className="name">{c.name}</span>
                    <code className="id muted">{c.id}</code>
                  </th>
                  <td>
                    <StatusBadge status={c.status} />
                  </td>
                  <td>
                    <LastSeen at={c.lastSeen} />
                  </td>
                  <td>{c.environment ?? <span className="muted">—</span>}</td>
                  <td>{MODE_LABELS[c.managementMode] ?? c.managementMode}</td>
                  <td>
                    {Object.keys(c.tags).length === 0 ? (
                      <span className="muted">—</span>
                    ) : (
                      <ul className="tags" aria-label="Tags">
                        {Object.entries(c.tags).map(([key, value]) => (
                          <li key={key} className="tag">
                            {key}={value}
                          </li>
                        ))}
                      </ul>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <LoadMore nextCursor={nextCursor} loading={loading} onLoad={loadMore} />
    </section>
  );
}
