/**
 * Routes: which pipeline reads which source on which collector, one
 * collector at a time (explicit assignments; a pipeline's matchers reach
 * every collector they select without a route). A table with names instead of ids,
 * and for editors and admins create, edit and delete. The one form (new, or
 * prefilled to edit; which is open lives in the URL: ?new, ?edit=<id>) is the
 * same SchemaForm the sources use, over a schema built from the collectors,
 * sources and pipelines that exist, so the API's refusals (a source not
 * active on the collector, a pipeline of the wrong signal) land beside the
 * field they name.
 */
import { useState, type FormEvent } from "react";
import type { PipelineRecord, RouteRecord, SourceRecord } from "../../../shared/config-records.ts";
import { api } from "../client.ts";
import { useAction } from "../action.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { useLoad } from "../load.ts";
import { SchemaForm } from "../components/SchemaForm.tsx";
import { EmptyState } from "../components/EmptyState.tsx";
import { ListTable } from "../components/ListTable.tsx";
import { useLiveEvents } from "../events.ts";
import { Link, navigate, useLocation } from "../router.tsx";
import { PendingChangesNote, useCanWrite } from "../schema/editing.tsx";
import { fieldErrors, readableError } from "../schema/errors.ts";
import type { ConfigValue, Schema } from "../schema/schema.ts";
import type { Collector } from "../../../shared/collectors.ts";
import type { RuntimeDifference } from "../../../shared/rollouts.ts";

/** A route as POST and PUT answer it: with what its source delivers otherwise on an Alloy collector. */
type RouteWritten = RouteRecord & { differences: RuntimeDifference[] };

/** The parity warning said after a save, or "" when the source delivers the same on the collector's runtime. */
function differencesText(differences: readonly RuntimeDifference[]): string {
  return differences
    .map((d) => ` On this Alloy collector, ${d.sourceType} data differs from what the ${RUNTIME_NAMES.otelcol} delivers: ${d.difference}.`)
    .join("");
}
import "./Components.css";
import { RUNTIME_NAMES } from "../../../shared/vocabulary.ts";

const BASE = "/ui/routes";
/** The most collectors the form offers (the API's largest page). */
const COLLECTOR_LIMIT = 1000;

interface Lookups {
  collectors: Collector[];
  sources: SourceRecord[];
  pipelines: PipelineRecord[];
}

/** Everything a route names, fetched together; reloaded with the routes. */
function useRoutesData(reload: number) {
  const { data, setData, error, loading } = useLoad(
    () =>
      Promise.all([api.get("/routes"), api.get("/collectors", { query: { limit: COLLECTOR_LIMIT } }), api.get("/sources"), api.get("/pipelines")]).then(
        ([routes, collectors, sources, pipelines]) => ({
          routes: routes.items,
          lookups: { collectors: collectors.items, sources: sources.items, pipelines: pipelines.items } satisfies Lookups,
        }),
      ),
    String(reload),
  );
  /** Shows a route write at once, before the reload that follows it. */
  const setRoutes = (update: (before: RouteRecord[]) => RouteRecord[]) => setData((before) => before && { ...before, routes: update(before.routes) });
  return { routes: data?.routes ?? [], setRoutes, lookups: data?.lookups ?? null, error, loading };
}

function nameOf<T extends { id: string; name: string }>(list: T[] | undefined, id: string): string {
  return list?.find((item) => item.id === id)?.name ?? id;
}

export function RoutesPage() {
  const { search } = useLocation();
  const canWrite = useCanWrite();
  const [reload, setReload] = useState(0);
  const [said, setSaid] = useState("");
  const { error: deleteError, run } = useAction();
  const { routes, setRoutes, lookups, error, loading } = useRoutesData(reload);
  useLiveEvents(["worktree"], () => setReload((n) => n + 1));
  const creating = canWrite && search.has("new");
  const editing = canWrite ? search.get("edit") : null;
  const editRoute = editing !== null ? routes.find((r) => r.id === editing) : undefined;

  const describe = (route: RouteRecord) =>
    `the route from ${nameOf(lookups?.sources, route.sourceId)} to ${nameOf(lookups?.pipelines, route.pipelineId)} on ${nameOf(lookups?.collectors, route.collectorId)}`;

  function remove(route: RouteRecord) {
    if (!window.confirm(`Delete ${describe(route)}? The collector stops running it once the change is published.`)) return;
    run(
      () => api.delete("/routes/{id}", { params: { id: route.id } }),
      () => {
        setRoutes((before) => before.filter((r) => r.id !== route.id));
        setSaid(`Deleted ${describe(route)}.`);
        setReload((n) => n + 1);
      },
    );
  }

  return (
    <section aria-labelledby="routes-title">
      <div className="page-head">
        <h1 id="routes-title">Routes</h1>
        {canWrite && !creating && editing === null && (
          <button type="button" className="button primary" onClick={() => navigate(`${BASE}?new`)}>
            New route
          </button>
        )}
      </div>
      {canWrite && <PendingChangesNote />}
      {creating && lookups && (
        <RouteForm
          lookups={lookups}
          onSaved={({ differences, ...route }) => {
            // The list takes the API's answer at once, so it never disagrees with the message; a reload follows.
            setRoutes((before) => [...before, route]);
            setSaid(`Created the route.${differencesText(differences)}`);
            setReload((n) => n + 1);
            navigate(BASE);
          }}
        />
      )}
      {editRoute && lookups && (
        <RouteForm
          key={editRoute.id}
          lookups={lookups}
          route={editRoute}
          onSaved={({ differences, ...route }) => {
            setRoutes((before) => before.map((r) => (r.id === route.id ? route : r)));
            setSaid(`Saved ${describe(route)}.${differencesText(differences)}`);
            setReload((n) => n + 1);
            navigate(BASE);
          }}
        />
      )}
      {editing !== null && !editRoute && !loading && <p className="muted">No route with id {editing} in the working tree.</p>}
      <ErrorMessage error={error} />
      <p className="muted" aria-live="polite">
        {loading ? "Loading…" : error ? "" : routes.length === 0 ? "No routes yet." : `${routes.length} route${routes.length === 1 ? "" : "s"}.`}
        {said !== "" && ` ${said}`}
      </p>
      <ErrorMessage error={readableError(deleteError)} />
      {!loading && !error && routes.length === 0 && !creating && (
        <EmptyState
          title="Routes are optional"
          actions={
            <>
              {canWrite && (
                <button type="button" className="button primary" onClick={() => navigate(`${BASE}?new`)}>
                  Create a route
                </button>
              )}
              <Link href="/ui/pipelines" className="button">
                Open pipelines
              </Link>
            </>
          }
        >
          A route runs one pipeline on one collector, fed by one source. A pipeline with matchers needs none: it runs on every collector its matchers select.
        </EmptyState>
      )}
      {routes.length > 0 && (
        <ListTable
          caption={{ id: "routes-caption", text: "Routes" }}
          className="components-list"
          columns={["Collector", "Source", "Pipeline"]}
          actions={canWrite}
        >
          {routes.map((route) => {
            const pipeline = lookups?.pipelines.find((p) => p.id === route.pipelineId);
            return (
              <tr key={route.id} aria-current={route.id === editing ? "true" : undefined}>
                <th scope="row">
                  <Link href={`/ui/collectors/${encodeURIComponent(route.collectorId)}`} className="name">
                    {nameOf(lookups?.collectors, route.collectorId)}
                  </Link>
                  <code className="id muted">{route.id}</code>
                </th>
                <td>{nameOf(lookups?.sources, route.sourceId)}</td>
                <td>
                  <Link href={`/ui/pipelines/${encodeURIComponent(route.pipelineId)}`}>{pipeline?.name ?? route.pipelineId}</Link>
                  {pipeline && <span className="id muted">{pipeline.signal}</span>}
                </td>
                {canWrite && (
                  <td className="record-actions">
                    <button
                      type="button"
                      className="button"
                      aria-label={`Edit route ${route.id}`}
                      onClick={() => navigate(`${BASE}?edit=${encodeURIComponent(route.id)}`)}
                    >
                      Edit
                    </button>
                    <button type="button" className="button" aria-label={`Delete route ${route.id}`} onClick={() => remove(route)}>
                      Delete
                    </button>
                  </td>
                )}
              </tr>
            );
          })}
        </ListTable>
      )}
    </section>
  );
}

/** The route form's schema: a choice per field, labelled with names, sources marked by whether they are active on the chosen collector. */
function routeSchema(lookups: Lookups, active: Set<string> | null): Schema {
  return {
    type: "object",
    required: ["collectorId", "sourceId", "pipelineId"],
    properties: {
      collectorId: {
        title: "Collector",
        description: lookups.collectors.length === 0 ? "No collectors yet: enroll one first." : undefined,
        oneOf: lookups.collectors.map((c) => ({ const: c.id, title: c.environment ? `${c.name} (${c.environment})` : c.name })),
      },
      sourceId: {
        title: "Source",
        description: "The source must be active on the collector (see the collector's page).",
        oneOf: lookups.sources.map((s) => ({
          const: s.id,
          title: `${s.name} (${s.type})${active !== null && !active.has(s.id) ? " — not active on this collector" : ""}`,
        })),
      },
      pipelineId: {
        title: "Pipeline",
        oneOf: lookups.pipelines.map((p) => ({ const: p.id, title: `${p.name} (${p.signal})` })),
      },
    },
  };
}

/** New route, or with `route` the same form prefilled, saved with PUT. */
function RouteForm({ lookups, route, onSaved }: { lookups: Lookups; route?: RouteRecord; onSaved: (route: RouteWritten) => void }) {
  const [value, setValue] = useState<ConfigValue>(route ? { collectorId: route.collectorId, sourceId: route.sourceId, pipelineId: route.pipelineId } : {});
  const collectorId = typeof value.collectorId === "string" ? value.collectorId : null;
  const activations = useLoad(
    collectorId === null
      ? null
      : () => api.get("/collectors/{id}/sources", { params: { id: collectorId } }).then((page) => new Set(page.items.map((a) => a.sourceId))),
    collectorId ?? "",
    { reset: "all" },
  );
  const active = activations.data;
  const saving = useAction();
  const busy = saving.busy;
  const error = saving.error ?? activations.error;

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    saving.run(() => (route ? api.put("/routes/{id}", { params: { id: route.id }, body: value }) : api.post("/routes", { body: value })), onSaved);
  }

  const schema = routeSchema(lookups, active);
  return (
    <section className="detail-block component-form" aria-labelledby="route-form-title">
      <h2 id="route-form-title">{route ? `Edit route ${route.id}` : "New route"}</h2>
      <ErrorMessage error={readableError(error)} />
      <form aria-labelledby="route-form-title" onSubmit={onSubmit}>
        <SchemaForm schema={schema} value={value} onChange={setValue} errors={fieldErrors(error, schema)} idPrefix="route" />
        <div className="record-form-actions">
          <button type="submit" className="button primary" disabled={busy}>
            Save
          </button>
          <button type="button" className="button ghost" onClick={() => navigate(BASE)}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}
