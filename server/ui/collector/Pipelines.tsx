/**
 * Which pipelines apply to the collector in the working tree, and why: a
 * route that names it (explicit assignment) or the pipeline's matchers, which
 * its attributes satisfy (GET /collectors/{id}/pipelines); beside each
 * matcher, the attribute it read: its value and where that comes from.
 */
import { collectorAttributes, type AttributeOrigin } from "../../../shared/collector-attributes.ts";
import type { Collector } from "../../../shared/collectors.ts";
import { parseMatcher } from "../../../shared/matchers.ts";
import { api } from "../client.ts";
import { useLoad } from "../load.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { Link } from "../router.tsx";
import { useTrustedKeys } from "../trust.ts";

const ORIGINS: Record<AttributeOrigin, string> = { set: "set in svc", reported: "reported by the collector, trusted", virtual: "from the record" };

/** What a matcher read of the collector: `team is "payments" (set in svc)`, or that the attribute is absent (an untrusted reported one reads so). */
function reading(matcher: string, attributes: ReturnType<typeof collectorAttributes>): string {
  const { name } = parseMatcher(matcher);
  const attribute = Object.hasOwn(attributes, name) ? attributes[name] : undefined;
  if (attribute === undefined) return `${name} is absent (reads as "")`;
  if (!attribute.targets) return `${name} is reported as ${JSON.stringify(attribute.value)} but not trusted, so it reads as ""`;
  return `${name} is ${JSON.stringify(attribute.value)} (${ORIGINS[attribute.origin]})`;
}

export function AppliedPipelinesSection({ collector, reload }: { collector: Collector; reload: number }) {
  const collectorId = collector.id;
  const attributes = collectorAttributes(collector, useTrustedKeys());
  const { data: answer, error } = useLoad(() => api.get("/collectors/{id}/pipelines", { params: { id: collectorId } }), `${collectorId}|${reload}`);

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
                <>
                  <span className="muted">matches all of its matchers:</span>
                  <ul className="matcher-reasons">
                    {item.via.matchers.map((m, i) => (
                      <li key={i}>
                        <code>{m}</code> <span className="muted">— {reading(m, attributes)}</span>
                      </li>
                    ))}
                  </ul>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
