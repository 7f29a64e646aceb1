/**
 * The audit log: GET /api/v1/audit as a table, newest first, filtered by
 * the API's own filters (action, actor, time range [from, to)). The filters
 * live in the URL query, so a reload, a shared link or Back keeps them;
 * "Load more" follows the API's nextCursor. The time inputs are local
 * times in the URL and sent to the API as ISO 8601 instants. Each entry's
 * resource shows by name, linked (the API names it), a deleted one by its id
 * with "(deleted)", and so are the records its details name by id; a commit
 * links to its diff in the history.
 */
import type { AuditEntry } from "../../../shared/audit.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { isNamedKind, RecordName } from "../components/RecordName.tsx";
import { shortCommit } from "../format.ts";
import { Link } from "../router.tsx";
import { FilterActions } from "../components/FilterActions.tsx";
import { LoadMore } from "../components/LoadMore.tsx";
import { LastSeen } from "../components/LastSeen.tsx";
import { ListSummary } from "../components/ListSummary.tsx";
import { ListTable } from "../components/ListTable.tsx";
import { StatusBadge, type Tone } from "../components/StatusBadge.tsx";
import { useFilteredList } from "../list.ts";
import "./Audit.css";

const PAGE_SIZE = 50;
const FILTERS = ["action", "actor", "from", "to"] as const;
const OUTCOME_LOOKS: Record<string, { symbol: string; tone: Tone }> = {
  success: { symbol: "✓", tone: "ok" },
  failure: { symbol: "✕", tone: "error" },
  denied: { symbol: "⊘", tone: "warn" },
};

/** A datetime-local value (local time) as an ISO instant; null when it is not a time. */
function toInstant(value: string): string | null {
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

function listQuery(search: URLSearchParams, cursor: string | null): URLSearchParams {
  const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
  for (const key of ["action", "actor"] as const) {
    const value = search.get(key)?.trim();
    if (value) query.set(key, value);
  }
  for (const key of ["from", "to"] as const) {
    const value = search.get(key)?.trim();
    // An unreadable time goes to the API as typed, so its error says why.
    if (value) query.set(key, toInstant(value) ?? value);
  }
  if (cursor !== null) query.set("cursor", cursor);
  return query;
}

function Outcome({ outcome }: { outcome: string }) {
  return <StatusBadge status={`outcome-${outcome}`} label={outcome} symbol={OUTCOME_LOOKS[outcome]?.symbol} tone={OUTCOME_LOOKS[outcome]?.tone} />;
}

/** The other records an entry's details name by id (the API names them), above the raw details. */
function Refs({ refs }: { refs: AuditEntry["refs"] }) {
  if (!refs || refs.length === 0) return null;
  return (
    <ul className="plain audit-refs" aria-label="Records named in the details">
      {refs.map((ref) => (
        <li key={ref.key}>
          <RecordName kind={ref.kind} id={ref.id} name={ref.name} deleted={ref.name === null} />
        </li>
      ))}
    </ul>
  );
}

function Details({ details }: { details: Record<string, unknown> }) {
  if (Object.keys(details).length === 0) return <span className="muted">—</span>;
  const compact = JSON.stringify(details);
  if (compact.length <= 60) return <code className="audit-json">{compact}</code>;
  return (
    <details className="audit-details">
      <summary>
        <code className="audit-json">{compact.slice(0, 57)}…</code>
      </summary>
      <pre className="audit-json-full">{JSON.stringify(details, null, 2)}</pre>
    </details>
  );
}

/** The record an entry is about: by name where the API named it, a commit as a link to its diff. */
function Resource({ entry }: { entry: AuditEntry }) {
  const { resource, resourceId: id, target } = entry;
  if (id !== null && target && isNamedKind(resource)) return <RecordName kind={resource} id={id} name={target.name} deleted={target.deleted} />;
  if (id !== null && resource === "commit" && /^[0-9a-f]{40}$/.test(id)) {
    return (
      <span className="record-name">
        Commit{" "}
        <Link href={`/ui/changes?commit=${id}`} title={id}>
          <code>{shortCommit(id)}</code>
        </Link>
      </span>
    );
  }
  return (
    <>
      <span className="name">{resource}</span>
      {id && <code className="id muted">{id}</code>}
    </>
  );
}

export function AuditPage() {
  const { search, filterKey, filtered, items, nextCursor, error, loading, loadMore, onFilter } = useFilteredList("/ui/audit", FILTERS, "/audit", listQuery);

  return (
    <section aria-labelledby="audit-title">
      <div className="page-head">
        <h1 id="audit-title">Audit</h1>
      </div>
      <form key={filterKey} className="filters" role="search" aria-label="Filter audit entries" onSubmit={onFilter}>
        <div className="field">
          <label htmlFor="audit-action">Action</label>
          <input
            id="audit-action"
            name="action"
            defaultValue={search.get("action") ?? ""}
            placeholder="enrollment.create"
            aria-describedby="audit-action-hint"
          />
          <span id="audit-action-hint" className="hint">
            exact name
          </span>
        </div>
        <div className="field">
          <label htmlFor="audit-actor">Actor</label>
          <input id="audit-actor" name="actor" defaultValue={search.get("actor") ?? ""} placeholder="user:alice" />
        </div>
        <div className="field">
          <label htmlFor="audit-from">From</label>
          <input id="audit-from" name="from" type="datetime-local" step="1" defaultValue={search.get("from") ?? ""} />
        </div>
        <div className="field">
          <label htmlFor="audit-to">Before</label>
          <input id="audit-to" name="to" type="datetime-local" step="1" defaultValue={search.get("to") ?? ""} />
        </div>
        <FilterActions filtered={filtered} base="/ui/audit" />
      </form>
      <ErrorMessage error={error} />
      <ListSummary
        loading={loading}
        error={error}
        count={items.length}
        more={nextCursor !== null}
        filtered={filtered}
        noun={["entry", "entries"]}
        empty="No audit entries yet."
        noMatch="No audit entries match these filters."
      />
      {items.length > 0 && (
        <ListTable
          caption={{ id: "audit-caption", text: "Audit entries" }}
          className="audit-list"
          columns={["Time", "Actor", "Action", "Resource", "Outcome", "Details"]}
        >
          {items.map((entry) => (
            <tr key={entry.id}>
              <td>
                <LastSeen at={entry.time} />
              </td>
              <td>
                <code>{entry.actor}</code>
                {entry.remoteAddr && <span className="id muted">{entry.remoteAddr}</span>}
              </td>
              <th scope="row">
                <code>{entry.action}</code>
              </th>
              <td>
                <Resource entry={entry} />
              </td>
              <td>
                <Outcome outcome={entry.outcome} />
              </td>
              <td>
                <Refs refs={entry.refs} />
                <Details details={entry.details} />
              </td>
            </tr>
          ))}
        </ListTable>
      )}
      <LoadMore nextCursor={nextCursor} loading={loading} onLoad={loadMore} />
    </section>
  );
}
