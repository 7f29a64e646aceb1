/**
 * Which pipelines apply to the collector in the working tree, and why: a
 * route that names it (explicit assignment) or the pipeline's matchers, which
 * its attributes satisfy (GET /collectors/{id}/pipelines).
 */
import { useEffect, useState } from "react";
import type { AppliedPipelines } from "../../../shared/pipelines.ts";
import { api, ApiError } from "../api.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { Link } from "../router.tsx";

export function AppliedPipelinesSection({ collectorId, reload }: { collectorId: string; reload: number }) {
  const [answer, setAnswer] = useState<AppliedPipelines | null>(null);
  const [error, setError] = useState<ApiError | null>(null);

  useEffect(() => {
    let current = true;
    api.get<AppliedPipelines>(`/collectors/${encodeURIComponent(collectorId)}/pipelines`).then(
      (found) => {
        if (!current) return;
        setAnswer(found);
        setError(null);
      },
      (caught: ApiError) => current && setError(caught),
    );
    return () => {
      current = false;
    };
  }, [collectorId, reload]);

  return (
    <section className="detail-block" aria-labelledby="applied-pipelines-title">
      <h2 id="applied-pipelines-title">Pipelines</h2>
      <ErrorMessage error={error} />
      {!answer && !error && <p className="muted">Loading…</p>}
      {answer && answer.items.length === 0 && <p className="muted">No pipeline applies: no route names this collector and no pipeline's matchers match it.</p>}
      {answer && answer.items.length > 0 && (
        <ul className="applied-pipelines">
          {answer.items.map((item) => (
            <li key={`${item.pipelineId} ${"route" in item.via ? item.via.route : "matchers"}`}>
              <Link href={`/ui/pipelines/${encodeURIComponent(item.pipelineId)}`}>{item.name}</Link>{" "}
              {"route" in item.via ? (
                <span className="muted">via route (explicit assignment)</span>
              ) : (
                <span className="muted">
                  matches {item.via.matchers.map((m, i) => (
                    <span key={i}>
                      {i > 0 && ", "}
                      <code>{m}</code>
                    </span>
                  ))}
                </span>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
