/**
 * The collector registry at fleet scale: GET /api/v1/collectors filtered by
 * status, why a collector needs attention (the dashboard's counts link here
 * with it), tag, free text and attribute matchers (the filters live in the URL
 * query, one `match` per matcher, so a reload, a shared link or Back keeps
 * them). A fleet runs to 10,000 collectors, so
 * only the rows in view are in the DOM (@tanstack/react-virtual) while the
 * table still tells assistive technology its full size (aria-rowcount), and
 * the next page is fetched as the user scrolls near the end ("Load more"
 * stays for keyboard users). Live collector events update rows in place.
 * Writers also get "Add collector" and a checkbox per row: the selection
 * (kept while the filters stay) takes bulk actions, and when matchers are
 * the only filter, so can every collector they select, loaded or not;
 * viewers get neither.
 */
import { useVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useMemo, useRef, useState } from "react";
import { compileFilter } from "../../../shared/collector-filter.ts";
import { ATTENTION_REASONS, isConfigReason, recordReasons, type AttentionReason } from "../../../shared/attention.ts";
import type { TrustedKeys } from "../../../shared/collector-attributes.ts";
import { useTrustedKeys } from "../trust.ts";
import { COLLECTOR_STATUSES, type CollectorStatus } from "../../../shared/collector-status.ts";
import type { Collector } from "../../../shared/collectors.ts";
import { MatcherListError, parseMatcherList, type Matcher } from "../../../shared/matchers.ts";
import { MODE_NAMES } from "../../../shared/vocabulary.ts";
import { api } from "../client.ts";
import { useLoad } from "../load.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { FilterActions } from "../components/FilterActions.tsx";
import { LoadMore } from "../components/LoadMore.tsx";
import { LastSeen } from "../components/LastSeen.tsx";
import { StatusBadge } from "../components/StatusBadge.tsx";
import { isReportingOnly, ReportingOnlyNote } from "../components/ReportingOnly.tsx";
import { useFilteredList } from "../list.ts";
import { Link, useLocation } from "../router.tsx";
import { useLiveEvents, type LiveEvent } from "../events.ts";
import { AddCollector } from "../collector/AddCollector.tsx";
import { EmptyState } from "../components/EmptyState.tsx";
import { BulkActions, type BulkTarget } from "../collector/BulkActions.tsx";
import { DriftedCollectors, DriftedLink } from "../collector/DriftedCollectors.tsx";
import { MatcherFields } from "../components/MatcherFields.tsx";
import { useCanWrite } from "../schema/editing.tsx";
import "./Collectors.css";

/** The first page is small so rows show at once; later pages are larger so scrolling a fleet takes few requests. */
const FIRST_PAGE = 50;
const NEXT_PAGE = 250;
/** Fetch the next page once the last row in view is this close to the end. */
const PREFETCH_ROWS = 20;
const ROW_ESTIMATE = 53;

/** A row of GET /collectors: the collector and why it needs attention. */
type Row = Collector & { attention: AttentionReason[] };

/** The attention filter's choices, worded as the dashboard's counts. */
const ATTENTION_LABELS: Record<AttentionReason, string> = {
  failed: "failed",
  offline: "offline",
  unrenderable: "cannot render",
  pinned: "pinned",
  drifted: "drifted",
  reportingOnly: "reporting only",
};

/** The URL's attention filter when it is one the API knows (an unknown one is sent as is, and the API says why it is refused). */
function attentionOf(search: URLSearchParams): AttentionReason | null {
  const value = search.get("attention");
  return (ATTENTION_REASONS as readonly string[]).includes(value ?? "") ? (value as AttentionReason) : null;
}

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
function listQuery(search: URLSearchParams, cursor: string | null): URLSearchParams {
  const query = new URLSearchParams({ limit: String(cursor === null ? FIRST_PAGE : NEXT_PAGE) });
  const status = search.get("status");
  if (status) query.set("status", status);
  const attention = search.get("attention");
  if (attention) query.set("attention", attention);
  for (const tag of tagFilters(search.get("tag") ?? "")) query.append("tag", tag);
  const q = search.get("q")?.trim();
  if (q) query.set("q", q);
  for (const m of search.getAll("match")) if (m !== "") query.append("match", m);
  if (cursor !== null) query.set("cursor", cursor);
  return query;
}

/**
 * The list's filters as a predicate on one collector, the API's own
 * (compileFilter), for live events. A collector event does not carry config
 * state, so under a config reason (failed, pinned...) only loaded rows stay,
 * judged on the rest; none joins until the list is loaded again.
 */
function matcher(search: URLSearchParams, trusted: TrustedKeys, loaded: ReadonlySet<string>): (c: Collector) => boolean {
  const status = search.get("status");
  const attention = search.get("attention");
  const q = search.get("q")?.trim();
  let match: Matcher[];
  try {
    match = parseMatcherList(search.getAll("match"), "match");
  } catch (error) {
    // The API refused the same matchers and the list says why; no live event joins it either.
    if (error instanceof MatcherListError) return () => false;
    throw error;
  }
  return compileFilter({
    tags: tagFilters(search.get("tag") ?? ""),
    ...(status ? { status: status as CollectorStatus } : {}),
    ...(q ? { q } : {}),
    ...(attention ? { attention: attention as AttentionReason, attending: loaded } : {}),
    match,
    trusted,
  });
}

/** The list's matchers when they are its only filter: then they alone say which collectors it holds. */
function onlyMatchers(search: URLSearchParams): string[] | null {
  const match = search.getAll("match");
  const others = search.get("status") || search.get("attention") || search.get("tag")?.trim() || search.get("q")?.trim();
  return match.length > 0 && !others ? match : null;
}

/** How often queued live events are applied: a busy fleet sends hundreds a second, the table redraws at most this often. */
const LIVE_FLUSH_MS = 100;

/**
 * The loaded pages with live collector events applied. A loaded row is
 * updated in place, or dropped when it is deleted or stops matching the
 * filters (and back in place if it matches again). A collector not loaded
 * that matches waits behind a "N new — Show" banner, unless a later page
 * will bring it anyway (ids are in creation order, as the API pages them).
 */
function useLiveCollectors(items: Row[], search: URLSearchParams, filterKey: string, nextCursor: string | null) {
  const [changed, setChanged] = useState<ReadonlyMap<string, Row | null>>(new Map());
  const [added, setAdded] = useState<Row[]>([]);
  const [waiting, setWaiting] = useState<ReadonlyMap<string, Row>>(new Map());
  const [interrupted, setInterrupted] = useState(false);
  const trusted = useTrustedKeys();
  const queue = useRef(new Map<string, LiveEvent>());
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);

  useEffect(() => {
    setChanged(new Map());
    setAdded([]);
    setWaiting(new Map());
    setInterrupted(false);
    queue.current.clear();
  }, [filterKey]);
  useEffect(() => () => void (timer.current && clearTimeout(timer.current)), []);

  const loaded = useMemo(() => (added.length === 0 ? items : [...items, ...added].sort((a, b) => (a.id < b.id ? -1 : 1))), [items, added]);
  const loadedIds = useMemo(() => new Set(loaded.map((c) => c.id)), [loaded]);
  const rows = useMemo(() => (changed.size === 0 ? loaded : loaded.flatMap((c) => (changed.has(c.id) ? (changed.get(c.id) ?? []) : [c]))), [loaded, changed]);

  function flush() {
    timer.current = null;
    const events = [...queue.current.values()];
    queue.current.clear();
    const matches = matcher(search, trusted, loadedIds);
    const lastId = loaded.at(-1)?.id;
    const shown = new Map(rows.map((r) => [r.id, r]));
    const nextChanged = new Map(changed);
    const nextWaiting = new Map(waiting);
    for (const event of events) {
      const record = event.op === "put" ? (event.data as Collector | undefined) : undefined;
      // The record's reasons from the event; its config reasons as last listed (a collector event does not change them).
      const config = (shown.get(event.id)?.attention ?? []).filter(isConfigReason);
      const c = record && { ...record, attention: ATTENTION_REASONS.filter((r) => [...recordReasons(record), ...config].includes(r)) };
      const keep = c !== undefined && matches(c) ? c : null;
      if (loadedIds.has(event.id)) nextChanged.set(event.id, keep);
      else if (keep && (nextCursor === null || (lastId !== undefined && event.id < lastId))) nextWaiting.set(event.id, keep);
      else nextWaiting.delete(event.id);
    }
    setChanged(nextChanged);
    setWaiting(nextWaiting);
  }

  // The timer calls the latest flush, which sees the state of the latest render.
  const latestFlush = useRef(flush);
  latestFlush.current = flush;
  useLiveEvents(["collector"], (event) => {
    // Events sent while the stream was down are lost: say so rather than show rows that may be stale.
    if (event.type === "reconnected") {
      setInterrupted(true);
      return;
    }
    queue.current.set(event.id, event);
    timer.current ??= setTimeout(() => latestFlush.current(), LIVE_FLUSH_MS);
  });

  function showWaiting() {
    setAdded((before) => [...before, ...waiting.values()]);
    setWaiting(new Map());
  }

  return { rows, waiting: waiting.size, showWaiting, interrupted };
}

/**
 * How many collectors the filters match, when the API can say without paging
 * through them all: /system/health counts the fleet by status, so an
 * unfiltered or status-only list has a known total, POST /matchers/preview
 * counts what matchers alone select, and GET /dashboard what an attention
 * filter alone does; tag and text do not, nor matchers with status.
 */
function useFleetTotal(search: URLSearchParams, filterKey: string): number | null {
  const matchers = onlyMatchers(search);
  const status = search.get("status");
  const attention = attentionOf(search);
  const countable =
    !search.get("tag")?.trim() &&
    !search.get("q")?.trim() &&
    (matchers !== null || !search.has("match")) &&
    (!search.has("attention") || (attention !== null && !status && !search.has("match")));
  // The total is a nicety: without it (or when it cannot be read) the list says "50+" as it always could.
  const { data: total } = useLoad(
    countable
      ? () =>
          attention !== null
            ? api.get("/dashboard").then((dashboard) => dashboard[attention].count)
            : matchers !== null
              ? api.post("/matchers/preview", { body: { matchers, limit: 1 } }).then(({ count }) => count)
              : api
                  .get("/system/health")
                  .then(({ collectors }: { collectors: Record<string, number> }) =>
                    status ? (collectors[status] ?? null) : Object.values(collectors).reduce((a, b) => a + b, 0),
                  )
      : null,
    filterKey,
    { reset: "all" },
  );
  return total;
}

function summary(shown: number, total: number | null, more: boolean, filtered: boolean): string {
  if (shown === 0 && !more) return filtered ? "No collectors match these filters." : "No collectors yet.";
  const noun = `collector${(total ?? shown) === 1 ? "" : "s"}`;
  if (!more) return `Showing ${shown} ${noun}.`;
  return total === null ? `Showing ${shown}+ ${noun}.` : `Showing ${shown} of ${total} ${noun}.`;
}

/**
 * The list, started afresh (first page, no live changes) by "Refresh" after
 * live updates were interrupted; or, at ?view=drifted, the drifted collectors.
 */
export function CollectorsPage() {
  const [generation, setGeneration] = useState(0);
  const { search } = useLocation();
  if (search.get("view") === "drifted") return <DriftedCollectors />;
  return <CollectorList key={generation} onRefresh={() => setGeneration((n) => n + 1)} />;
}

function CollectorList({ onRefresh }: { onRefresh: () => void }) {
  const { search, filterKey, filtered, items, nextCursor, error, loading, loadMore, onFilter } = useFilteredList(
    "/ui/collectors",
    ["status", "attention", "tag", "q", "match"],
    "/collectors",
    listQuery,
  );
  const { rows, waiting, showWaiting, interrupted } = useLiveCollectors(items, search, filterKey, nextCursor);
  const fleetTotal = useFleetTotal(search, filterKey);
  const more = nextCursor !== null;
  // Once every page is in, the rows are the total; until then the fleet count (if known) is.
  const total = more ? (fleetTotal === null ? null : Math.max(fleetTotal, rows.length)) : rows.length;
  const canWrite = useCanWrite();
  const [adding, setAdding] = useState(false);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  // Every collector the matchers select, loaded or not (only while they are the list's only filter).
  const [allMatching, setAllMatching] = useState(false);
  useEffect(() => {
    setSelected(new Set());
    setAllMatching(false);
  }, [filterKey]);
  const matchers = onlyMatchers(search);
  const selectedRows = useMemo(() => rows.filter((c) => selected.has(c.id)), [rows, selected]);
  const everyRow = useMemo(() => new Set(rows.map((c) => c.id)), [rows]);
  const selection = canWrite
    ? {
        selected: allMatching ? everyRow : selected,
        toggle: (id: string) => {
          // Unticking one row out of "all matching" leaves the loaded rows but that one.
          const before = allMatching ? everyRow : selected;
          setAllMatching(false);
          const after = new Set(before);
          if (!after.delete(id)) after.add(id);
          setSelected(after);
        },
        toggleAll: () => {
          const all = allMatching || selectedRows.length === rows.length;
          setAllMatching(false);
          setSelected(all ? new Set() : everyRow);
        },
      }
    : undefined;
  const bulkTarget: BulkTarget =
    allMatching && matchers !== null && total !== null ? { kind: "matching", matchers, count: total } : { kind: "rows", collectors: selectedRows };
  // Offered once every loaded row is ticked and the matchers select more than are loaded.
  const offerAllMatching =
    canWrite && !allMatching && matchers !== null && total !== null && total > rows.length && rows.length > 0 && selectedRows.length === rows.length;

  return (
    <section aria-labelledby="collectors-title">
      <div className="page-head">
        <h1 id="collectors-title">Collectors</h1>
        {canWrite && !adding && (
          <button type="button" className="button primary" onClick={() => setAdding(true)}>
            Add collector
          </button>
        )}
      </div>
      <nav className="view-chips" aria-label="Collector views">
        <DriftedLink />
      </nav>
      {/* Once one is added, the list starts afresh so it is in it (a live event alone would wait behind "1 new"). */}
      {adding && <AddCollector onClose={(added) => (added ? onRefresh() : setAdding(false))} />}
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
          <label htmlFor="filter-attention">Needs attention</label>
          <select id="filter-attention" name="attention" defaultValue={search.get("attention") ?? ""}>
            <option value="">Any</option>
            {ATTENTION_REASONS.map((reason) => (
              <option key={reason} value={reason}>
                {ATTENTION_LABELS[reason]}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="filter-tag">Tag</label>
          <input id="filter-tag" name="tag" defaultValue={search.get("tag") ?? ""} placeholder="team=payments" aria-describedby="filter-tag-hint" />
          <span id="filter-tag-hint" className="hint">
            key=value or key; separate several with commas
          </span>
        </div>
        <div className="field grow">
          <label htmlFor="filter-q">Search</label>
          <input id="filter-q" name="q" type="search" defaultValue={search.get("q") ?? ""} placeholder="Name, id or environment" />
        </div>
        <MatchFilter initial={search.getAll("match")} />
        <FilterActions filtered={filtered} base="/ui/collectors" />
      </form>
      <ErrorMessage error={error} />
      <p className="muted" aria-live="polite">
        {loading && items.length === 0 ? "Loading…" : error && items.length === 0 ? "" : summary(rows.length, total, more, filtered)}
      </p>
      {interrupted && (
        <p className="live-banner" role="status">
          <span>Live updates were interrupted; rows may be out of date.</span>
          <button type="button" className="button" onClick={onRefresh}>
            Refresh
          </button>
        </p>
      )}
      {waiting > 0 && (
        <p className="live-banner" role="status">
          <span>
            {waiting} new collector{waiting === 1 ? "" : "s"}
          </span>
          <button type="button" className="button" onClick={showWaiting}>
            Show
          </button>
        </p>
      )}
      {offerAllMatching && (
        <p className="live-banner" role="status">
          <span>All {rows.length} loaded collectors are selected.</span>
          <button type="button" className="button" onClick={() => setAllMatching(true)}>
            Select all {total} matching
          </button>
        </p>
      )}
      {canWrite && (
        <BulkActions
          target={bulkTarget}
          onSettled={(succeeded) => {
            // "All matching" is done once: what the edit changed may no longer match.
            if (allMatching) {
              setAllMatching(false);
              setSelected(new Set());
            } else setSelected((before) => new Set([...before].filter((id) => !succeeded.includes(id))));
          }}
        />
      )}
      {!loading && !error && !filtered && rows.length === 0 && (
        <EmptyState
          title="Your fleet is empty"
          actions={
            <>
              {canWrite && (
                <button type="button" className="button primary" onClick={() => setAdding(true)}>
                  Add your first collector
                </button>
              )}
              <Link href="/ui/onboarding" className="button">
                Enroll hosts in bulk
              </Link>
            </>
          }
        >
          A collector is one OpenTelemetry Collector or Alloy process on a host. Add one here to get its install command, or mint an enrollment token for many
          hosts on Onboarding; each shows up in this list as soon as it connects.
        </EmptyState>
      )}
      {rows.length > 0 && <CollectorTable rows={rows} total={total} selection={selection} onNearEnd={more && !loading && !error ? loadMore : undefined} />}
      <LoadMore nextCursor={nextCursor} loading={loading} onLoad={loadMore} />
    </section>
  );
}

/** The matcher rows of the filter form: each input is a `match` field, so applying the filters puts one `match` per matcher in the URL. */
function MatchFilter({ initial }: { initial: string[] }) {
  const [values, setValues] = useState(initial);
  return (
    <div className="field match-filter">
      <MatcherFields idPrefix="filter-match" legend="Attribute matchers" values={values} onChange={setValues} name="match" />
    </div>
  );
}

/**
 * The rows in view of a scrolling ARIA table (a <table> cannot be
 * virtualised without breaking its column layout). Row 1 is the header, so
 * a collector's aria-rowindex is its position + 2; aria-rowcount is -1 while
 * the total is unknown, as ARIA specifies.
 */
interface Selection {
  selected: ReadonlySet<string>;
  toggle: (id: string) => void;
  toggleAll: () => void;
}

function CollectorTable({ rows, total, selection, onNearEnd }: { rows: Row[]; total: number | null; selection?: Selection; onNearEnd?: () => void }) {
  const scroller = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_ESTIMATE,
    // Whole pixels: fractional row heights summed into a fractional total made the table scroll by a pixel.
    measureElement: (element) => Math.ceil(element.getBoundingClientRect().height),
    overscan: 8,
    getItemKey: (index) => rows[index]!.id,
  });
  const inView = virtualizer.getVirtualItems();
  const lastInView = inView.at(-1)?.index ?? 0;
  const nearEnd = onNearEnd !== undefined && lastInView >= rows.length - PREFETCH_ROWS;
  useEffect(() => {
    if (nearEnd) onNearEnd?.();
  }, [nearEnd, rows.length]);

  return (
    <div
      ref={scroller}
      className={selection ? "collector-table selectable" : "collector-table"}
      role="table"
      aria-labelledby="collectors-title"
      aria-rowcount={total === null ? -1 : total + 1}
      tabIndex={0}
    >
      <div role="rowgroup" className="collector-head">
        <div role="row" aria-rowindex={1} className="collector-row">
          {/* The checkboxes sit in the name column, so the table's columns are the same for every role. */}
          <span role="columnheader" className="cell-name">
            {selection && (
              <input
                type="checkbox"
                className="select"
                aria-label="Select all loaded collectors"
                checked={rows.length > 0 && rows.every((c) => selection.selected.has(c.id))}
                onChange={selection.toggleAll}
              />
            )}
            Name
          </span>
          <span role="columnheader">Status</span>
          <span role="columnheader">Last seen</span>
          <span role="columnheader">Environment</span>
          <span role="columnheader">Management</span>
          <span role="columnheader">Tags</span>
        </div>
      </div>
      <div role="rowgroup" className="collector-body" style={{ height: virtualizer.getTotalSize() }}>
        {inView.map((item) => {
          const c = rows[item.index]!;
          return (
            <div
              key={item.key}
              ref={virtualizer.measureElement}
              data-index={item.index}
              role="row"
              aria-rowindex={item.index + 2}
              className="collector-row"
              style={{ transform: `translateY(${item.start}px)` }}
            >
              <span role="rowheader" className="cell-name">
                {selection && (
                  <input
                    type="checkbox"
                    className="select"
                    aria-label={`Select ${c.name}`}
                    checked={selection.selected.has(c.id)}
                    onChange={() => selection.toggle(c.id)}
                  />
                )}
                <Link href={`/ui/collectors/${encodeURIComponent(c.id)}`} className="name">
                  {c.name}
                </Link>
                <code className="id muted">{c.id}</code>
                {isReportingOnly(c) && <ReportingOnlyNote />}
              </span>
              <span role="cell" className="cell-status">
                <StatusBadge status={c.status} />
                {/* Offline is the status itself, reporting only the note beside the name. */}
                {c.attention.filter(isConfigReason).map((reason) => (
                  <StatusBadge key={reason} status={reason} label={ATTENTION_LABELS[reason]} />
                ))}
              </span>
              <span role="cell" className="cell-seen" data-label="Last seen">
                <LastSeen at={c.lastSeen} />
              </span>
              <span role="cell" className="cell-env" data-label="Environment">
                {c.environment ?? <span className="muted">—</span>}
              </span>
              <span role="cell" className="cell-mode" data-label="Management">
                {MODE_NAMES[c.managementMode] ?? c.managementMode}
              </span>
              <span role="cell" className="cell-tags">
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
              </span>
            </div>
          );
        })}
      </div>
    </div>
  );
}
