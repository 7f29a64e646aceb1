/**
 * Sources and destinations (one page, two kinds): the working tree's records
 * as a table, and create, edit and delete for editors and admins. A new
 * record starts by picking a catalog type; its settings form is generated
 * from that type's JSON Schema (GET /catalog), so adding a catalog type needs
 * no UI change. Which form is open lives in the URL (?new=<type>, ?edit=<id>),
 * so a link can open one prefilled: the Hosts page's "Create source" sends
 * ?new=<type>&name=…&config=<json>&from=… and the user only has to Save.
 * Sensitive values (header values) are edited write-only (SecretField) and
 * listed by kind, "(secret)", never by text.
 */
import { useState, type FormEvent } from "react";
import type { CatalogEntry } from "../../../shared/catalog.ts";
import type { SourceRecord } from "../../../shared/config-records.ts";
import { ApiError } from "../api.ts";
import { api } from "../client.ts";
import { useAction } from "../action.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { SchemaForm } from "../components/SchemaForm.tsx";
import { EmptyState } from "../components/EmptyState.tsx";
import { ListTable } from "../components/ListTable.tsx";
import { useLiveEvents } from "../events.ts";
import { useLoad } from "../load.ts";
import { navigate, useLocation } from "../router.tsx";
import { PendingChangesNote, useCanWrite } from "../schema/editing.tsx";
import { fieldErrors, readableError } from "../schema/errors.ts";
import { initialValue, isRecord, type ConfigValue, type Schema } from "../schema/schema.ts";
import { configSummary } from "../schema/summary.ts";
import "./Components.css";
import { RUNTIME_NAMES } from "../../../shared/vocabulary.ts";

type Kind = "sources" | "destinations";
/** Sources and destinations have the same shape. */
type ComponentRecord = SourceRecord;

/** `empty` says what the kind is for, under an empty list. */
const WORDS: Record<Kind, { one: string; title: string; empty: string }> = {
  sources: {
    one: "source",
    title: "Sources",
    empty: "A source is what collectors read: log files, OTLP, host metrics and more. Pick its type, then use it in a pipeline.",
  },
  destinations: {
    one: "destination",
    title: "Destinations",
    empty: "A destination is where collectors send what they read: an OTLP endpoint, a log store, a metrics backend. Pick its type, then use it in a pipeline.",
  },
};

/** The page a link builds to open the create form of a source type prefilled (the Hosts page's suggestion). */
export function newSourceHref(type: string, prefill: { name?: string; config?: Record<string, unknown>; from?: string }): string {
  const query = new URLSearchParams({ new: type });
  if (prefill.name) query.set("name", prefill.name);
  if (prefill.config) query.set("config", JSON.stringify(prefill.config));
  if (prefill.from) query.set("from", prefill.from);
  return `/ui/sources?${query}`;
}

function useCatalog(kind: Kind) {
  const { data: entries, error } = useLoad(() => api.get("/catalog").then((catalog) => catalog[kind]), kind);
  return { entries, error };
}

export function ComponentsPage({ kind }: { kind: Kind }) {
  const words = WORDS[kind];
  const base = `/ui/${kind}`;
  const { search } = useLocation();
  const canWrite = useCanWrite();
  const catalog = useCatalog(kind);
  const [reload, setReload] = useState(0);
  const [said, setSaid] = useState("");
  const { error: deleteError, run } = useAction();

  const list = useLoad(() => api.get(`/${kind}`).then((page) => page.items), `${kind}:${reload}`);
  const { error, loading } = list;
  const items = list.data ?? [];

  // Someone else's edit (another tab, the API) changes the working tree too.
  useLiveEvents(["worktree"], () => setReload((n) => n + 1));

  const creating = canWrite ? search.get("new") : null;
  const editing = canWrite ? search.get("edit") : null;
  const entryOf = (type: string) => catalog.entries?.find((e) => e.type === type);

  // The list takes the API's answer at once, so it never disagrees with the message above it; a reload follows.
  function saved(record: ComponentRecord, verb: string) {
    list.setData((before) => {
      const rows = before ?? [];
      return rows.some((r) => r.id === record.id) ? rows.map((r) => (r.id === record.id ? record : r)) : [...rows, record];
    });
    setSaid(`${verb} ${words.one} "${record.name}".`);
    setReload((n) => n + 1);
    navigate(base);
  }

  function remove(record: ComponentRecord) {
    if (!window.confirm(`Delete ${words.one} "${record.name}"? Anything that still uses it must be removed first.`)) return;
    run(
      () => api.delete(`/${kind}/{id}`, { params: { id: record.id } }),
      () => {
        list.setData((before) => before?.filter((r) => r.id !== record.id) ?? null);
        setSaid(`Deleted ${words.one} "${record.name}".`);
        setReload((n) => n + 1);
      },
    );
  }

  const editRecord = editing !== null ? items.find((r) => r.id === editing) : undefined;

  return (
    <section aria-labelledby="components-title">
      <div className="page-head">
        <h1 id="components-title">{words.title}</h1>
        {canWrite && creating === null && editing === null && (
          <button type="button" className="button primary" onClick={() => navigate(`${base}?new=`)}>
            New {words.one}
          </button>
        )}
      </div>
      {canWrite && <PendingChangesNote />}
      <ErrorMessage error={catalog.error} />
      {creating === "" && catalog.entries && <TypePicker kind={kind} entries={catalog.entries} base={base} />}
      {creating !== null && creating !== "" && catalog.entries && (
        <NewComponent key={creating} kind={kind} entry={entryOf(creating)} type={creating} search={search} base={base} onSaved={(r) => saved(r, "Created")} />
      )}
      {editing !== null && editRecord && catalog.entries && (
        <ComponentEditor key={editRecord.id} kind={kind} entry={entryOf(editRecord.type)} record={editRecord} base={base} onSaved={(r) => saved(r, "Saved")} />
      )}
      {editing !== null && !editRecord && !loading && (
        <p className="muted">
          No {words.one} with id {editing} in the working tree.
        </p>
      )}
      <p className="muted" aria-live="polite">
        {loading ? "Loading…" : error ? "" : items.length === 0 ? `No ${kind} yet.` : `${items.length} ${items.length === 1 ? words.one : kind}.`}
        {said !== "" && ` ${said}`}
      </p>
      <ErrorMessage error={error} />
      <ErrorMessage error={readableError(deleteError)} />
      {!loading && !error && items.length === 0 && creating === null && (
        <EmptyState
          title={`Add your first ${words.one}`}
          actions={
            canWrite && (
              <button type="button" className="button primary" onClick={() => navigate(`${base}?new=`)}>
                Pick a {words.one} type
              </button>
            )
          }
        >
          {words.empty}
        </EmptyState>
      )}
      {items.length > 0 && (
        <ListTable
          caption={{ id: "components-caption", text: words.title }}
          className="components-list"
          columns={["Name", "Type", "Settings"]}
          actions={canWrite}
        >
          {items.map((record) => (
            <tr key={record.id} aria-current={record.id === editing ? "true" : undefined}>
              <th scope="row">
                <span className="name">{record.name}</span>
                <code className="id muted">{record.id}</code>
              </th>
              <td>
                {entryOf(record.type)?.title ?? record.type}
                <code className="id muted">{record.type}</code>
              </td>
              <td className="components-summary">
                {configSummary(record.config, entryOf(record.type)?.schema as Schema | undefined).join(" · ") || <span className="muted">defaults</span>}
              </td>
              {canWrite && (
                <td className="record-actions">
                  <button
                    type="button"
                    className="button"
                    aria-label={`Edit ${record.name}`}
                    onClick={() => navigate(`${base}?edit=${encodeURIComponent(record.id)}`)}
                  >
                    Edit
                  </button>
                  <button type="button" className="button" aria-label={`Delete ${record.name}`} onClick={() => remove(record)}>
                    Delete
                  </button>
                </td>
              )}
            </tr>
          ))}
        </ListTable>
      )}
    </section>
  );
}

/** Step one of "New": the catalog's types of this kind, each a button with its description. */
function TypePicker({ kind, entries, base }: { kind: Kind; entries: CatalogEntry[]; base: string }) {
  const words = WORDS[kind];
  return (
    <section className="detail-block component-form" aria-labelledby="type-picker-title">
      <h2 id="type-picker-title">New {words.one}: choose a type</h2>
      <ul className="type-picker">
        {entries.map((entry) => (
          <li key={entry.type}>
            <button
              type="button"
              className="button"
              aria-describedby={`type-${entry.type}-hint`}
              onClick={() => navigate(`${base}?new=${encodeURIComponent(entry.type)}`)}
            >
              {entry.title}
            </button>
            <span id={`type-${entry.type}-hint`} className="hint">
              {entry.description} <span className="signals">({entry.signals.join(", ")})</span>
              {!entry.runtimes.includes("alloy") && <span className="runtime-note"> Not available on {RUNTIME_NAMES.alloy}.</span>}
            </span>
          </li>
        ))}
      </ul>
      <p>
        <button type="button" className="button ghost" onClick={() => navigate(base)}>
          Cancel
        </button>
      </p>
    </section>
  );
}

/** The create form, prefilled from the URL when a link (the Hosts page's suggestion) says what to create. */
function NewComponent({
  kind,
  entry,
  type,
  search,
  base,
  onSaved,
}: {
  kind: Kind;
  entry: CatalogEntry | undefined;
  type: string;
  search: URLSearchParams;
  base: string;
  onSaved: (record: ComponentRecord) => void;
}) {
  if (!entry) {
    return (
      <div className="detail-block">
        <ErrorMessage error={new ApiError(0, "unknown_type", `The catalog has no ${WORDS[kind].one} type '${type}'.`)} />
        <button type="button" className="button" onClick={() => navigate(`${base}?new=`)}>
          Choose a type
        </button>
      </div>
    );
  }
  let config: ConfigValue = {};
  try {
    const parsed: unknown = JSON.parse(search.get("config") ?? "{}");
    if (isRecord(parsed)) config = parsed;
  } catch {
    // A hand-edited link with broken JSON: start from the type's defaults.
  }
  return (
    <ComponentEditor
      kind={kind}
      entry={entry}
      record={{ id: "", name: search.get("name") ?? "", type, config }}
      from={search.get("from")}
      base={base}
      onSaved={onSaved}
    />
  );
}

/** The whole request body as one schema, so the API's paths (`name`, `config.endpoint`) map straight onto fields. */
function bodySchema(entry: CatalogEntry): Schema {
  return {
    type: "object",
    required: ["name"],
    properties: {
      name: { type: "string", title: "Name", description: "How this record is listed and referred to." },
      config: { ...(entry.schema as Schema), title: "Settings" },
    },
  };
}

interface EditorProps {
  kind: Kind;
  entry: CatalogEntry | undefined;
  /** An id of "" means a new record. */
  record: ComponentRecord;
  /** What suggested this record (shown so the user knows why it is prefilled). */
  from?: string | null;
  base: string;
  onSaved: (record: ComponentRecord) => void;
}

function ComponentEditor({ kind, entry, record, from, base, onSaved }: EditorProps) {
  const words = WORDS[kind];
  const isNew = record.id === "";
  const schema: Schema = entry
    ? bodySchema(entry)
    : { type: "object", required: ["name"], properties: { name: { type: "string", title: "Name" }, config: { title: "Settings" } } };
  const [value, setValue] = useState<ConfigValue>(() => ({
    name: record.name === "" ? undefined : record.name,
    config: entry ? initialValue(entry.schema as Schema, record.config) : record.config,
  }));
  const { busy, error, run } = useAction();

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const body = { name: value.name ?? "", type: record.type, config: value.config ?? {} };
    run(() => (isNew ? api.post(`/${kind}`, { body }) : api.put(`/${kind}/{id}`, { params: { id: record.id }, body })), onSaved);
  }

  const title = isNew ? `New ${words.one}: ${entry?.title ?? record.type}` : `Edit ${words.one} ${record.name}`;
  return (
    <section className="detail-block component-form" aria-labelledby="component-form-title">
      <h2 id="component-form-title">{title}</h2>
      <p className="muted">
        Type <code>{record.type}</code>
        {entry && ` — ${entry.description}`}
      </p>
      {entry && !entry.runtimes.includes("alloy") && (
        <p className="note" role="note">
          Not available on {RUNTIME_NAMES.alloy}
          {entry.unavailable?.alloy ? `: ${entry.unavailable.alloy}` : ""}. Only {RUNTIME_NAMES.otelcol}
          collectors can activate it.
        </p>
      )}
      {from && (
        <p className="note" role="note">
          Prefilled from {from}. Review the settings, then save.
        </p>
      )}
      <ErrorMessage error={readableError(error)} />
      <form aria-labelledby="component-form-title" onSubmit={onSubmit}>
        <SchemaForm schema={schema} value={value} onChange={setValue} errors={fieldErrors(error, schema)} idPrefix="component" />
        <div className="record-form-actions">
          <button type="submit" className="button primary" disabled={busy}>
            Save
          </button>
          <button type="button" className="button ghost" onClick={() => navigate(base)}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}
