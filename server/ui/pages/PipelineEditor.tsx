/**
 * /ui/pipelines/{id}: loads the pipeline and what its editor offers (the
 * catalog, processor templates, sources and destinations) in one go, then
 * hands them to the editor (server/ui/pipeline/), which follows later saves
 * by others, and the matchers that choose which collectors run it.
 * Viewers get it read-only.
 */
import { api } from "../client.ts";
import { useLoad } from "../load.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { Editor } from "../pipeline/Editor.tsx";
import type { EditorContext, PipelineRecord } from "../pipeline/types.ts";
import { Link } from "../router.tsx";
import { useSession } from "../session.tsx";

interface Loaded {
  pipeline: PipelineRecord;
  ctx: EditorContext;
}

export function PipelineEditorPage({ id }: { id: string }) {
  const { state } = useSession();
  const canEdit = state.status === "signedIn" && state.user.role !== "viewer";
  const {
    data: loaded,
    setData: setLoaded,
    error,
  } = useLoad(
    (): Promise<Loaded> =>
      Promise.all([
        api.get("/pipelines/{id}", { params: { id } }),
        api.get("/catalog"),
        api.get("/processor-templates"),
        api.get("/sources"),
        api.get("/destinations"),
      ]).then(([pipeline, catalog, templates, sources, destinations]) => ({
        pipeline,
        ctx: { signal: pipeline.signal, catalog, templates: templates.items, sources: sources.items, destinations: destinations.items },
      })),
    id,
  );

  return (
    <section aria-labelledby="pipeline-title" className="pipeline-editor">
      <p className="breadcrumb-back">
        <Link href="/ui/pipelines">← Pipelines</Link>
      </p>
      <div className="page-head">
        <h1 id="pipeline-title">{loaded ? loaded.pipeline.name : "Pipeline"}</h1>
        {loaded && <span className="tag">{loaded.pipeline.signal}</span>}
      </div>
      <ErrorMessage error={error} />
      {!loaded && !error && <p className="muted">Loading…</p>}
      {loaded && !canEdit && <p className="note">Read-only: changing a pipeline needs the editor or admin role.</p>}
      {loaded && (
        <Editor
          pipeline={loaded.pipeline}
          ctx={loaded.ctx}
          canEdit={canEdit}
          onLatest={(pipeline) => setLoaded((before) => before && { ...before, pipeline })}
        />
      )}
    </section>
  );
}
