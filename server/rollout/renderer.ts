/**
 * Renders collector configs for one publish. A collector's config depends only
 * on its runtime, activations, routes and the pipelines its attributes match
 * (and, on Runtime O, the version it reported, which picks between upstream's
 * old and new names), and fleets are mostly alike, so equal inputs are rendered once and share bytes and hash.
 */
import { createHash } from "node:crypto";
import type { Collector } from "../../shared/collectors.ts";
import type { Snapshot } from "../configstore/layout.ts";
import type { RouteRecord } from "../../shared/config-records.ts";
import type { CollectorConfigInput } from "../render/input.ts";
import { reportedVersion } from "../collectors/runtime.ts";
import { RUNTIME_OF, type Runtime } from "../../shared/vocabulary.ts";
import { renderAlloy } from "../render/alloy.ts";
import { renderOtelcol } from "../render/otelcol.ts";
import { matchedPipelineIds, matcherPipelines } from "../collectors/matching.ts";

export interface RenderedConfig {
  /** sha256 of the body, hex: the identity delivery compares. */
  hash: string;
  runtime: Runtime;
  contentType: string;
  body: string;
}

/** A renderer over one snapshot; throws the render's ValidationError naming the collector's bad path. */
export function fleetRenderer(snapshot: Snapshot): (collector: Collector) => RenderedConfig {
  const routesOf = new Map<string, RouteRecord[]>();
  for (const route of snapshot.routes.values()) {
    const list = routesOf.get(route.collectorId);
    if (list) list.push(route);
    else routesOf.set(route.collectorId, [route]);
  }
  const rendered = new Map<string, RenderedConfig>();
  const withMatchers = matcherPipelines(snapshot.pipelines);

  return (collector) => {
    const alloy = RUNTIME_OF[collector.managementMode] === "alloy";
    const activations = snapshot.activations.get(collector.id) ?? { collectorId: collector.id, sources: [], destinations: [] };
    const routes = routesOf.get(collector.id) ?? [];
    const version = alloy ? null : reportedVersion(collector);
    const matched = matchedPipelineIds(collector, withMatchers);
    const key = JSON.stringify([
      matched,
      alloy,
      version,
      activations.sources,
      activations.destinations,
      routes.map((r) => `${r.sourceId} ${r.pipelineId}`).sort(),
    ]);
    let result = rendered.get(key);
    if (!result) {
      const input: CollectorConfigInput = {
        collector: { id: collector.id, name: collector.name, version },
        sources: snapshot.sources,
        destinations: snapshot.destinations,
        pipelines: snapshot.pipelines,
        activations,
        routes,
        matched,
      };
      const body = alloy ? renderAlloy(input) : renderOtelcol(input);
      result = {
        hash: createHash("sha256").update(body).digest("hex"),
        runtime: alloy ? "alloy" : "otelcol",
        contentType: alloy ? "text/plain" : "text/yaml",
        body,
      };
      rendered.set(key, result);
    }
    return result;
  };
}
