/**
 * Live preview: the draft graph rendered to collector config by the server
 * (POST /pipelines/{id}/topology/preview), for either runtime, a moment
 * after the graph stops changing. Moving nodes changes nothing rendered, so
 * only the graph's content triggers a render. The same call validates the
 * graph; its answer is handed up so problems pin to nodes while editing.
 */
import { useEffect, useState } from "react";
import { api, ApiError } from "../api.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { RUNTIMES, type Runtime } from "../../../shared/vocabulary.ts";
import type { Topology } from "./types.ts";

const RUNTIME_LABELS: Record<Runtime, string> = { otelcol: "OpenTelemetry Collector", alloy: "Alloy" };

const DEBOUNCE_MS = 400;

interface PreviewProps {
  pipelineId: string;
  topology: Topology;
  /** Each answer: null when the graph rendered, else the API's error, with the graph that was sent. */
  onChecked: (error: ApiError | null, sent: Topology) => void;
}

export function Preview({ pipelineId, topology, onChecked }: PreviewProps) {
  const [runtime, setRuntime] = useState<Runtime>("otelcol");
  const [config, setConfig] = useState<string | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [pending, setPending] = useState(true);
  const content = JSON.stringify({ nodes: topology.nodes.map(({ position: _, ...n }) => n), edges: topology.edges });

  useEffect(() => {
    let current = true;
    setPending(true);
    const sent: Topology = JSON.parse(content);
    const timer = setTimeout(() => {
      api
        .post<{ config: string }>(`/pipelines/${encodeURIComponent(pipelineId)}/topology/preview?runtime=${runtime}`, sent)
        .then(
          (answer) => {
            if (!current) return;
            setConfig(answer.config);
            setError(null);
            onChecked(null, sent);
          },
          (caught: ApiError) => {
            if (!current) return;
            setConfig(null);
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
    // onChecked is the editor's state setter; the content and runtime are the inputs.
  }, [pipelineId, content, runtime]);

  const label = RUNTIME_LABELS[runtime];
  return (
    <section className="detail-block preview" aria-labelledby="preview-title">
      <h2 id="preview-title">Config preview</h2>
      <fieldset className="runtime-switch">
        <legend>Runtime</legend>
        {RUNTIMES.map((r) => (
          <label key={r}>
            <input type="radio" name="preview-runtime" value={r} checked={runtime === r} onChange={() => setRuntime(r)} /> {RUNTIME_LABELS[r]}
          </label>
        ))}
      </fieldset>
      <p className="muted" aria-live="polite">
        {pending ? "Rendering…" : error ? "The graph does not render yet; see the problems." : `${label} config, not saved or delivered.`}
      </p>
      <ErrorMessage error={error} />
      {config !== null && (
        <pre className="preview-code" role="region" aria-label={`Rendered config (${label})`} tabIndex={0}>
          <code>{config}</code>
        </pre>
      )}
    </section>
  );
}
