/**
 * Who the config preview renders for: no collector (a runtime at the version
 * install.sh installs), or one collector, those the pipeline applies to (its
 * matchers, its routes) listed first, the rest narrowed by a search.
 */
import { useState } from "react";
import type { PreviewTarget } from "../../../shared/pipelines.ts";
import { RUNTIME_NAMES } from "../../../shared/vocabulary.ts";
import { api } from "../client.ts";
import { useLoad } from "../load.ts";

/** Collectors listed per group: a picker, not a fleet browser; the search finds the rest. */
const LISTED = 50;
const SEARCH_DEBOUNCE_MS = 300;

interface Choice {
  id: string;
  name: string;
}

/** The collectors the pipeline applies to, then the others matching `q`. */
function useChoices(pipelineId: string, matchers: readonly string[], q: string) {
  const key = JSON.stringify(matchers);
  const { data } = useLoad(
    () => {
      const matched =
        matchers.length === 0 ? Promise.resolve([] as Choice[]) : api.get("/collectors", { query: { limit: LISTED, match: matchers } }).then((p) => p.items);
      const routed = api.get("/routes", { query: { pipelineId } }).then((p) => new Set(p.items.map((r) => r.collectorId)));
      return Promise.all([matched, routed, api.get("/collectors", { query: { limit: LISTED, q: q.trim() || undefined } }).then((p) => p.items)]).then(
        ([byMatchers, routedIds, listed]) => {
          const first = new Map(byMatchers.map((c) => [c.id, { id: c.id, name: c.name }]));
          for (const c of listed) if (routedIds.has(c.id)) first.set(c.id, { id: c.id, name: c.name });
          return {
            applies: [...first.values()].sort((a, b) => a.name.localeCompare(b.name)),
            others: listed.filter((c) => !first.has(c.id)).map((c) => ({ id: c.id, name: c.name })),
          };
        },
      );
    },
    `${pipelineId}|${key}|${q}`,
    { delayMs: SEARCH_DEBOUNCE_MS, clearOnError: true },
  );
  const applies: Choice[] = data?.applies ?? [];
  const others: Choice[] = data?.others ?? [];
  return { applies, others };
}

interface RenderTargetProps {
  pipelineId: string;
  matchers: readonly string[];
  collectorId: string;
  onCollector: (id: string) => void;
}

export function RenderTargetPicker({ pipelineId, matchers, collectorId, onCollector }: RenderTargetProps) {
  const [q, setQ] = useState("");
  const { applies, others } = useChoices(pipelineId, matchers, q);
  return (
    <div className="render-target">
      <label htmlFor="preview-collector">Render for</label>
      <select id="preview-collector" value={collectorId} onChange={(event) => onCollector(event.currentTarget.value)}>
        <option value="">No collector: a runtime at the installed version</option>
        {applies.length > 0 && (
          <optgroup label="Collectors this pipeline applies to">
            {applies.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </optgroup>
        )}
        {others.length > 0 && (
          <optgroup label="Other collectors">
            {others.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </optgroup>
        )}
      </select>
      <input
        type="search"
        aria-label="Find a collector"
        placeholder="Find a collector by name"
        value={q}
        onChange={(event) => setQ(event.currentTarget.value)}
      />
    </div>
  );
}

/** One sentence saying what the preview was rendered for. */
export function renderedForText(target: PreviewTarget): string {
  const runtime = RUNTIME_NAMES[target.runtime];
  if (target.collector === null) {
    const why = target.versionFrom === "installer" ? "the version install.sh installs" : "the version asked for";
    return `Rendered for ${runtime} ${target.version} (${why}), not for a collector; not saved or delivered.`;
  }
  const { name, routed, matched } = target.collector;
  const version = target.version === null ? "which reported no version, so in the form every supported version accepts" : `reporting ${target.version}`;
  const joins = [matched ? "its attributes match the pipeline" : null, routed ? "a route names the pipeline" : null].filter((s) => s !== null);
  const applies =
    joins.length > 0
      ? `This pipeline applies to it: ${joins.join(" and ")}.`
      : "This pipeline does not apply to it (no route, matchers do not hold), so its config does not contain it.";
  return `Rendered for collector ${name} (${runtime}, ${version}) as a publish of this graph would deliver it, secrets as markers. ${applies}`;
}
