/**
 * Renders collector configs for one publish. A collector's config depends only
 * on its runtime, activations, routes and the pipelines its attributes match
 * (and, on Runtime O, the version it reported, which picks between upstream's
 * old and new names), and fleets are mostly alike, so equal inputs are rendered once and share bytes and hash.
 * Attribute references (`{{attr "KEY"}}`) are filled in after that render, per
 * collector (render/attributes.ts): a fleet whose configs differ only in
 * injected values still renders each render key once, and collectors with
 * equal values share bytes too. The hash is of the filled-in body.
 */
import type { Collector } from "../../shared/collectors.ts";
import type { Snapshot } from "../configstore/layout.ts";
import type { RouteRecord } from "../../shared/config-records.ts";
import type { CollectorConfigInput } from "../catalog/render-input.ts";
import { reportedVersion } from "../collectors/runtime.ts";
import { RUNTIME_OF, type Runtime } from "../../shared/vocabulary.ts";
import { renderAlloy } from "../render/alloy.ts";
import { renderOtelcol } from "../render/otelcol.ts";
import { planCollector } from "../render/plan.ts";
import { attributeTemplate, attributeValue, fillTemplate, templateId, type AttributeTemplate, type TemplateText } from "../render/attributes.ts";
import { referenceValues, type TrustedKeys } from "../collectors/attributes.ts";
import { matchedPipelineIds, matcherPipelines } from "../collectors/matching.ts";
import { AppError } from "../errors.ts";
import { BoundedMap } from "../lib/bounded-map.ts";

/** Filled-in configs kept per renderer: a renderer kept across attribute changes (retarget.ts) must not grow with them. */
const FILLED_LIMIT = 20_000;

export interface RenderedConfig {
  /** sha256 of the body, hex: the identity delivery compares. */
  hash: string;
  runtime: Runtime;
  contentType: string;
  body: string;
}

/** The source types each config a fleetRenderer made runs (render/differences.ts reads them); a stored config is not here. */
const SOURCE_TYPES = new WeakMap<RenderedConfig | AttributeTemplate, readonly string[]>();

/** A config as filled from a template (stored-rendered.ts stores it so): the values of the keys its slots name. */
export interface FilledFrom {
  templateId: string;
  template: TemplateText;
  values: Record<string, string>;
}

/** The template and values each filled-in config a fleetRenderer made was filled from: how it is stored (stored-rendered.ts). */
const FILLED_FROM = new WeakMap<RenderedConfig, FilledFrom>();

/** What a config a fleetRenderer returned was filled from; undefined when it has no attribute references (it is stored whole). */
export function filledFrom(config: RenderedConfig): FilledFrom | undefined {
  return FILLED_FROM.get(config);
}

/** A key configs with the same components share: their template's, when filled in from one (references are never a component's id). */
export function componentsKey(config: RenderedConfig): string {
  const filled = FILLED_FROM.get(config);
  return filled ? `template ${filled.templateId}` : config.hash;
}

/** Records what a config a fleetRenderer made on another thread (render-isolated.ts) was filled from, as it would have here. */
export function keepFilledFrom(config: RenderedConfig, filled: FilledFrom): void {
  FILLED_FROM.set(config, filled);
}

/** The source types of a config a fleetRenderer returned, for the parity warnings of a plan or preview. */
export function renderedSourceTypes(config: RenderedConfig): readonly string[] {
  return SOURCE_TYPES.get(config) ?? [];
}

/** Records the source types of a config a fleetRenderer made on another thread (render-isolated.ts), as it would have here. */
export function keepSourceTypes(config: RenderedConfig, types: readonly string[]): void {
  SOURCE_TYPES.set(config, types);
}

/**
 * A renderer over one snapshot; throws the render's ValidationError naming the collector's bad path.
 * `trusted` answers the reported keys matchers may read now (collectors/trust.ts): a renderer may outlive a change of them.
 */
export function fleetRenderer(snapshot: Snapshot, trusted: () => TrustedKeys): (collector: Collector) => RenderedConfig {
  const routesOf = new Map<string, RouteRecord[]>();
  for (const route of snapshot.routes.values()) {
    const list = routesOf.get(route.collectorId);
    if (list) list.push(route);
    else routesOf.set(route.collectorId, [route]);
  }
  /** Per render key: the config, when it references no attribute, else its template. */
  const rendered = new Map<string, RenderedConfig | AttributeTemplate>();
  /** Per render key and referenced values: collectors alike in both share bytes. */
  const filled = new BoundedMap<string, RenderedConfig>(FILLED_LIMIT);
  /** Per template: its id, its text alone (what is stored and sent between threads) and the keys its slots name. */
  const stored = new WeakMap<AttributeTemplate, { id: string; text: TemplateText; keys: string[] }>();
  const withMatchers = matcherPipelines(snapshot.pipelines);

  return (collector) => {
    const alloy = RUNTIME_OF[collector.managementMode] === "alloy";
    const runtime: Runtime = alloy ? "alloy" : "otelcol";
    const activations = snapshot.activations.get(collector.id) ?? { collectorId: collector.id, sources: [], destinations: [] };
    const routes = routesOf.get(collector.id) ?? [];
    const version = alloy ? null : reportedVersion(collector);
    const matched = matchedPipelineIds(collector, withMatchers, trusted());
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
      const plan = planCollector(input, runtime);
      const body = alloy ? renderAlloy(input, plan) : renderOtelcol(input, plan);
      result = attributeTemplate(runtime, body, plan.references) ?? config(runtime, body);
      SOURCE_TYPES.set(result, [...new Set(plan.sources.map((s) => s.type.type))]);
      rendered.set(key, result);
    }
    if (!("pieces" in result)) return result;
    // References are filled in after rendering: one more lookup, and a join and a hash for values not seen yet.
    // They read reported values too: a value the collector gives itself, never what it is sent.
    const attributes = referenceValues(collector);
    // The render key is JSON, which holds no raw line feed: the two parts cannot run into each other.
    const valuesKey = `${key}\n${JSON.stringify(result.keys.map((k) => attributeValue(attributes, k) ?? null))}`;
    let done = filled.get(valuesKey);
    if (!done) {
      done = config(runtime, fillTemplate(result, collector.id, attributes));
      SOURCE_TYPES.set(done, SOURCE_TYPES.get(result) ?? []);
      let named = stored.get(result);
      if (!named) {
        const text: TemplateText = { runtime: result.runtime, pieces: result.pieces, slots: result.slots };
        stored.set(result, (named = { id: templateId(text), text, keys: [...new Set(result.slots.map((s) => s.key))] }));
      }
      // Own properties, every key alike (an assignment of `__proto__` would set the prototype instead).
      const values: Record<string, string> = Object.fromEntries(named.keys.map((key) => [key, attributes[key]!]));
      FILLED_FROM.set(done, { templateId: named.id, template: named.text, values });
      filled.set(valuesKey, done);
    }
    return done;
  };
}

/** One collector's config, or why it cannot be rendered (its render's first detail); a render's other errors are thrown. */
export function renderOne(render: (collector: Collector) => RenderedConfig, collector: Collector): RenderedOne {
  try {
    return { config: render(collector) };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    const detail = error.details[0];
    return { path: detail?.path ?? null, message: detail?.message ?? error.message };
  }
}

/** Why a collector's config cannot be rendered: the render's first detail. */
export interface RenderProblem {
  path: string | null;
  message: string;
}

export type RenderedOne = { config: RenderedConfig } | RenderProblem;

function config(runtime: Runtime, body: string): RenderedConfig {
  return {
    // Bun's own SHA-256 is several times quicker than node:crypto's here, and a fleet with injected values hashes a body per collector.
    hash: Bun.SHA256.hash(body, "hex"),
    runtime,
    contentType: runtime === "alloy" ? "text/plain" : "text/yaml",
    body,
  };
}
