/**
 * Pipelines: every pipeline (GET /pipelines answers them all, no cursor)
 * with its signal, the matchers that choose the collectors it runs on, and
 * how many sources, processors and destinations its graph has; a form to create one (then its editor opens) and Delete with a
 * confirmation. The API refuses to delete a pipeline routes still use and
 * says which; that answer is shown as it came. Working-tree events refetch
 * the list, so another editor's changes show up.
 */
import { useCallback, useState, type FormEvent } from "react";
import { SIGNALS, type PipelineRecord } from "../../../shared/config-records.ts";
import { api } from "../client.ts";
import { useAction } from "../action.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { EmptyState } from "../components/EmptyState.tsx";
import { ListTable } from "../components/ListTable.tsx";
import { useLiveEvents } from "../events.ts";
import { useLoad } from "../load.ts";
import { Link, navigate } from "../router.tsx";
import { useSession } from "../session.tsx";

function count(pipeline: PipelineRecord, kind: PipelineRecord["topology"]["nodes"][number]["kind"]): number {
  return pipeline.topology.nodes.filter((n) => n.kind === kind).length;
}

function CreatePipeline() {
  const { busy, error, run } = useAction();
  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    run(
      () => api.post("/pipelines", { body: { name: String(form.get("name") ?? ""), signal: String(form.get("signal") ?? "logs") } }),
      (created) => navigate(`/ui/pipelines/${encodeURIComponent(created.id)}`),
    );
  }
  return (
    <section className="detail-block" aria-labelledby="create-pipeline-title">
      <h2 id="create-pipeline-title">New pipeline</h2>
      <form className="filters" aria-label="New pipeline" onSubmit={onSubmit}>
        <div className="field grow">
          <label htmlFor="pipeline-name">Name</label>
          <input id="pipeline-name" name="name" required maxLength={200} placeholder="nginx access logs" />
        </div>
        <div className="field">
          <label htmlFor="pipeline-signal">Signal</label>
          <select id="pipeline-signal" name="signal" defaultValue="logs">
            {SIGNALS.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <div className="filter-actions">
          <button type="submit" className="button primary" disabled={busy}>
            Create pipeline
          </button>
        </div>
      </form>
      <ErrorMessage error={error} />
    </section>
  );
}

export function PipelinesPage() {
  const { state } = useSession();
  const canEdit = state.status === "signedIn" && state.user.role !== "viewer";
  const [reload, setReload] = useState(0);
  const refetch = useCallback(() => setReload((n) => n + 1), []);
  useLiveEvents(["worktree"], refetch);
  const { data, error, setError, loading } = useLoad(() => api.get("/pipelines"), String(reload));
  const items = data?.items ?? [];
  const removing = useAction();

  function remove(pipeline: PipelineRecord) {
    if (!window.confirm(`Delete pipeline "${pipeline.name}"? Its graph is removed from the working tree.`)) return;
    // A refusal shows where the list's own error does.
    removing.run(
      () => api.delete("/pipelines/{id}", { params: { id: pipeline.id } }),
      () => {
        setError(null);
        refetch();
      },
      setError,
    );
  }

  return (
    <section aria-labelledby="pipelines-title">
      <div className="page-head">
        <h1 id="pipelines-title">Pipelines</h1>
      </div>
      {canEdit && <CreatePipeline />}
      <ErrorMessage error={error} />
      <p className="muted" aria-live="polite">
        {loading ? "Loading…" : items.length === 0 ? "No pipelines yet." : `${items.length} pipeline${items.length === 1 ? "" : "s"}.`}
      </p>
      {!loading && !error && items.length === 0 && (
        <EmptyState
          title="Build your first pipeline"
          actions={
            <>
              <Link href="/ui/sources?new=" className="button">
                Add a source
              </Link>
              <Link href="/ui/destinations?new=" className="button">
                Add a destination
              </Link>
            </>
          }
        >
          A pipeline carries one signal from sources through processors to destinations.
          {canEdit && " Name one above to open its editor;"} collectors run it when its matchers select them or a route assigns it.
        </EmptyState>
      )}
      {items.length > 0 && (
        <ListTable
          caption={{ id: "pipelines-caption", text: "Pipelines" }}
          columns={["Name", "Signal", "Collectors", "Sources", "Processors", "Destinations"]}
          numeric={[3, 4, 5]}
          actions={canEdit}
        >
          {items.map((p) => (
            <tr key={p.id}>
              <th scope="row">
                <Link href={`/ui/pipelines/${encodeURIComponent(p.id)}`} className="name">
                  {p.name}
                </Link>
                <code className="id muted">{p.id}</code>
              </th>
              <td>{p.signal}</td>
              <td>
                {(p.matchers?.length ?? 0) === 0 ? (
                  <span className="muted">by route</span>
                ) : (
                  <ul className="plain" aria-label={`Matchers of ${p.name}`}>
                    {p.matchers!.map((m, i) => (
                      <li key={i}>
                        <code>{m}</code>
                      </li>
                    ))}
                  </ul>
                )}
              </td>
              <td className="num">{count(p, "source")}</td>
              <td className="num">{count(p, "processor")}</td>
              <td className="num">{count(p, "destination")}</td>
              {canEdit && (
                <td>
                  <button type="button" className="button" aria-label={`Delete ${p.name}`} onClick={() => remove(p)}>
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
