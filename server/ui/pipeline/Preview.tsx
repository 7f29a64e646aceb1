/**
 * Live preview: the draft graph rendered to collector config by the server
 * (POST /pipelines/{id}/topology/preview), for a chosen collector exactly as
 * publish would deliver it, or for either runtime at the version install.sh
 * installs, saying which, a moment after the graph stops changing. Moving nodes changes nothing rendered, so
 * only the graph's content triggers a render. The same call validates the
 * graph; its answer is handed up so problems pin to nodes while editing.
 */
import { useState } from "react";
import type { ApiError } from "../api.ts";
import { api } from "../client.ts";
import { useLoad } from "../load.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { RUNTIME_NAMES, RUNTIMES, type Runtime } from "../../../shared/vocabulary.ts";
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
  const content = JSON.stringify({ nodes: topology.nodes.map(({ position: _, ...n }) => n), edges: topology.edges });
  // Moving nodes changes nothing rendered: the content and the target are what is read.
  const {
    data: answer,
    error,
    pending,
  } = useLoad(
    // A collector renders on its own runtime and version; otherwise the runtime chosen here.
    () =>
      api.post("/pipelines/{id}/topology/preview", {
        params: { id: pipelineId },
        query: collectorId ? { collectorId } : { runtime },
        body: JSON.parse(content),
      }),
    `${pipelineId}|${content}|${runtime}|${collectorId}`,
    {
      delayMs: DEBOUNCE_MS,
      clearOnError: true,
      onData: () => onChecked(null, JSON.parse(content)),
      onError: (caught) => onChecked(caught, JSON.parse(content)),
    },
  );

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
