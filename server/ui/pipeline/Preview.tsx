/**
 * Live preview: the draft graph rendered to collector config by the server
 * (POST /pipelines/{id}/topology/preview), for a chosen collector exactly as
 * publish would deliver it, or for either runtime at the version install.sh
 * installs, saying which, a moment after the graph stops changing. Moving nodes changes nothing rendered, so
 * only the graph's content triggers a render. The same call validates the
 * graph; its answer is handed up so problems pin to nodes while editing.
 */
import { useEffect, useState } from "react";
import { api, ApiError } from "../api.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { RUNTIME_NAMES, RUNTIMES, type Runtime } from "../../../shared/vocabulary.ts";
import type { PipelinePreview } from "../../../shared/pipelines.ts";
import { renderedForText, RenderTargetPicker } from "./RenderTarget.tsx";
import type { Topology } from "./types.ts";

const DEBOUNCE_MS = 400;

interface PreviewProps {
  pipelineId: string;
  /** The pipeline's saved matchers: collectors they select are offered first. */
  matchers: readonly string[];
  topology: Topology;
  /** Each answer: null when the graph rendered, else the API's error, with the graph that was sent. */
  onChecked: (error: ApiError | null, sent: Topology) => void;
}

export function Preview({ pipelineId, matchers, topology, onChecked }: PreviewProps) {
  const [runtime, setRuntime] = useState<Runtime>("otelcol");
  const [collectorId, setCollectorId] = useState("");
  const [answer, setAnswer] = useState<PipelinePreview | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [pending, setPending] = useState(true);
  const content = JSON.stringify({ nodes: topology.nodes.map(({ position: _, ...n }) => n), edges: topology.edges });

  useEffect(() => {
    let current = true;
    setPending(true);
    const sent: Topology = JSON.parse(content);
    const timer = setTimeout(() => {
      // A collector renders on its own runtime and version; otherwise the runtime chosen here.
      const query = new URLSearchParams(collectorId ? { collectorId } : { runtime });
      api
        .post<PipelinePreview>(`/pipelines/${encodeURIComponent(pipelineId)}/topology/preview?${query}`, sent)
        .then(
          (rendered) => {
            if (!current) return;
            setAnswer(rendered);
            setError(null);
            onChecked(null, sent);
          },
          (caught: ApiError) => {
            if (!current) return;
            setAnswer(null);
            setError(caught);
            onChecked(caught, sent);
          },
        )
        .finally(() => current && setPending(false));
    }, DEBOUNCE_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
    // onChecked is the editor's state setter; the content and the target are the inputs.
  }, [pipelineId, content, runtime, collectorId]);

  const label = RUNTIME_NAMES[answer?.renderedFor.runtime ?? runtime];
  return (
    <section className="detail-block preview" aria-labelledby="preview-title">
      <h2 id="preview-title">Config preview</h2>
      <RenderTargetPicker pipelineId={pipelineId} matchers={matchers} collectorId={collectorId} onCollector={setCollectorId} />
      {collectorId === "" && (
        <fieldset className="runtime-switch">
          <legend>Runtime</legend>
          {RUNTIMES.map((r) => (
            <label key={r}>
              <input type="radio" name="preview-runtime" value={r} checked={runtime === r} onChange={() => setRuntime(r)} /> {RUNTIME_NAMES[r]}
            </label>
          ))}
        </fieldset>
      )}
      <p className="muted" role="status" aria-label="Rendered for" aria-live="polite">
        {pending ? "Rendering…" : error ? "The graph does not render yet; see the problems." : answer ? renderedForText(answer.renderedFor) : ""}
      </p>
      <ErrorMessage error={error} />
      {answer !== null && answer.differences.length > 0 && (
        <ul className="hint" aria-label={`Differs from the ${RUNTIME_NAMES.otelcol}`}>
          {answer.differences.map((d) => (
            <li key={d.sourceType}>
              Other data than on the {RUNTIME_NAMES.otelcol}: <code>{d.sourceType}</code>: {d.difference}.
            </li>
          ))}
        </ul>
      )}
      {answer !== null && (
        <pre className="preview-code" role="region" aria-label={`Rendered config (${label})`} tabIndex={0}>
          <code>{answer.config}</code>
        </pre>
      )}
    </section>
  );
}
