/**
 * Which collectors run the pipeline by their attributes: the pipeline's
 * matchers, edited row by row (each checked as typed), with a live count
 * and the first matching collectors from POST /matchers/preview a moment
 * after typing stops, saved with PUT /pipelines/{id} (the graph is left as
 * stored, so this never races the canvas's own save). Routes still attach
 * the pipeline collector by collector beside this.
 */
import { useEffect, useState } from "react";
import type { ApiError } from "../api.ts";
import { api } from "../client.ts";
import { useAction } from "../action.ts";
import { useLoad } from "../load.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { filledMatchers, MatcherFields, matchersValid } from "../components/MatcherFields.tsx";
import { Link } from "../router.tsx";
import { isPathDetail } from "../schema/errors.ts";
import type { PipelineRecord } from "./types.ts";

const DEBOUNCE_MS = 300;
const SAMPLE = 10;

/** The collectors list filtered by these matchers (its URL repeats `match`). */
function collectorsMatching(matchers: readonly string[]): string {
  return `/ui/collectors?${new URLSearchParams(matchers.map((m) => ["match", m]))}`;
}

/** What the API said of each matcher (`matchers[2]`), by index. */
function problemsByIndex(error: ApiError | null): Map<number, string> {
  const out = new Map<number, string>();
  for (const d of (error?.details ?? []).filter(isPathDetail)) {
    const at = /^matchers\[(\d+)\]$/.exec(d.path);
    if (at) out.set(Number(at[1]), d.message);
  }
  return out;
}

/** The count and sample for `matchers`, fetched once typing pauses; null while there is nothing (valid) to ask. */
function useMatcherPreview(matchers: string[]) {
  const key = JSON.stringify(matchers);
  const askable = matchers.length > 0 && matchersValid(matchers);
  const {
    data: preview,
    error,
    pending,
  } = useLoad(askable ? () => api.post("/matchers/preview", { body: { matchers, limit: SAMPLE } }) : null, key, {
    delayMs: DEBOUNCE_MS,
    clearOnError: true,
    reset: "error",
  });
  return { preview, error, pending, askable };
}

export function TargetingSection({ pipeline, canEdit, onSaved }: { pipeline: PipelineRecord; canEdit: boolean; onSaved: (pipeline: PipelineRecord) => void }) {
  const stored = pipeline.matchers ?? [];
  const storedKey = JSON.stringify(stored);
  const [values, setValues] = useState<string[]>(stored);
  const { busy: saving, error: saveError, run } = useAction();
  const [saved, setSaved] = useState(false);
  const filled = filledMatchers(values);
  const dirty = JSON.stringify(filled) !== storedKey;
  const { preview, error, pending, askable } = useMatcherPreview(filled);

  // Someone else's save shows up here unless there are unsaved edits to keep.
  useEffect(() => {
    if (!dirty) setValues(stored);
  }, [storedKey]);

  // As for the graph: a reload or closed tab would lose unsaved matchers, so the browser asks first.
  useEffect(() => {
    if (!dirty) return;
    const warn = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener("beforeunload", warn);
    return () => window.removeEventListener("beforeunload", warn);
  }, [dirty]);

  function save() {
    // Blank rows go, so the API's matchers[i] is row i.
    setValues(filled);
    setSaved(false);
    run(
      () => api.put("/pipelines/{id}", { params: { id: pipeline.id }, body: { name: pipeline.name, signal: pipeline.signal, matchers: filled } }),
      (answer) => {
        setSaved(true);
        onSaved(answer);
      },
    );
  }

  let status: string;
  if (filled.length === 0) status = "No matchers: only collectors whose routes name this pipeline run it.";
  else if (!askable) status = "Fix the matchers above to see which collectors they select.";
  else if (pending || (preview === null && error === null)) status = "Counting matching collectors…";
  else if (preview === null) status = "";
  else status = `${preview.count} collector${preview.count === 1 ? "" : "s"} match${preview.count === 1 ? "es" : ""}.`;

  return (
    <section className="detail-block targeting" aria-labelledby="targeting-title">
      <h2 id="targeting-title">Collectors</h2>
      <p className="muted">
        Every collector whose attributes match all of these matchers runs this pipeline with the sources and destinations its graph names: no activation or
        route per collector is needed. Attributes are a collector's tags and environment, what it reports, and <code>collector.id</code>,{" "}
        <code>collector.name</code>, <code>collector.mode</code>.
      </p>
      <MatcherFields
        idPrefix="pipeline-matcher"
        legend="Matchers"
        values={values}
        onChange={(next) => {
          setValues(next);
          setSaved(false);
        }}
        readOnly={!canEdit}
        serverProblems={problemsByIndex(saveError)}
      />
      <p className="targeting-count" role="status" aria-live="polite">
        {status}
      </p>
      <ErrorMessage error={error} />
      {preview && preview.items.length > 0 && (
        <ul className="plain targeting-sample" aria-label="Matching collectors">
          {preview.items.map((c) => (
            <li key={c.id}>
              <Link href={`/ui/collectors/${encodeURIComponent(c.id)}`}>{c.name}</Link> <code className="muted">{c.id}</code>
            </li>
          ))}
        </ul>
      )}
      {preview && preview.count > preview.items.length && (
        <p>
          <Link href={collectorsMatching(filled)}>All {preview.count} matching collectors</Link>
        </p>
      )}
      {canEdit && (
        <div className="targeting-actions">
          <button type="button" className="button primary" onClick={save} disabled={saving || !dirty || !matchersValid(filled)}>
            {saving ? "Saving…" : "Save matchers"}
          </button>
          <span role="status" className="muted">
            {dirty ? "Unsaved matchers" : saved ? "Saved: pending until committed and published on the Changes page" : ""}
          </span>
        </div>
      )}
      <ErrorMessage error={saveError} />
    </section>
  );
}
