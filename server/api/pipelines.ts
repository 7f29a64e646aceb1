/** REST: /pipelines — graphs of sources, processors and destinations, their preview and dry-run. */
import { Type } from "@sinclair/typebox";
import {
  AppliedPipelinesSchema,
  ConfigObject,
  DryRunAnswerSchema,
  Pipeline,
  PipelineListSchema,
  PipelinePreviewSchema,
  PipelineRatesSchema,
  Topology,
  type PipelinePreview,
} from "../../shared/pipelines.ts";
import { RUNTIMES } from "../../shared/vocabulary.ts";
import type { ConfigStore } from "../configstore/configstore.ts";
import type { Pipelines } from "../configstore/pipelines.ts";
import { processorChain, validateTopology } from "../configstore/topology.ts";
import { route, type Route } from "../http/route.ts";
import { dryRunIsolated } from "../ottl/dryrun-isolated.ts";
import { MAX_CHAIN_PROCESSORS } from "../ottl/processors.ts";
import { chainRuntimeParity, logSourceTypesFeeding } from "../render/parity.ts";
import { pipelinePreviewDifferences, renderPipelinePreview } from "../render/preview.ts";
import { previewForCollector } from "../rollout/preview.ts";
import { INSTALLED_VERSIONS } from "../collectors/installed-versions.ts";
import { parseCollectorVersion } from "../catalog/versions.ts";
import { ForbiddenError, ValidationError } from "../errors.ts";
import { PipelineBody } from "./config-schemas.ts";
import { pipelineRates } from "./pipeline-rates.ts";
import type { ThroughputApiDeps } from "./throughput.ts";

/** Dry-run inputs are pasted log samples; they may be larger than ordinary API bodies. */
const DRY_RUN_LIMIT = 10 * 1024 * 1024;

const DryRunBody = Type.Object(
  {
    input: Type.Unknown({ description: "OTLP JSON logs: {resourceLogs: [{scopeLogs: [{logRecords: [...]}]}]}." }),
    processors: Type.Optional(
      Type.Array(
        Type.Object(
          { id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })), type: Type.String({ minLength: 1 }), config: Type.Optional(ConfigObject) },
          { additionalProperties: false },
        ),
        {
          maxItems: MAX_CHAIN_PROCESSORS,
          errorMessage: `must be a list of at most ${MAX_CHAIN_PROCESSORS} processors`,
          description: "Run this chain instead of the pipeline's own.",
        },
      ),
    ),
  },
  { additionalProperties: false },
);

const Runtime = Type.Union(
  RUNTIMES.map((r) => Type.Literal(r)),
  { default: "otelcol" },
);

/** What the /pipelines routes use. */
export interface PipelinesApiDeps extends ThroughputApiDeps {
  pipelines: Pipelines;
  configStore: ConfigStore;
}

export function pipelineRoutes(deps: PipelinesApiDeps): Route[] {
  return [
    route({
      method: "POST",
      path: "/pipelines",
      scope: "config:write",
      tag: "pipelines",
      summary: "Create a pipeline {name, signal, topology?}; the topology is validated.",
      body: PipelineBody,
      response: Pipeline,
      status: 201,
      handler: ({ body, principal }) => deps.pipelines.create(principal, body),
    }),
    route({
      method: "GET",
      path: "/pipelines",
      scope: "config:read",
      tag: "pipelines",
      summary: "List pipelines.",
      response: PipelineListSchema,
      handler: async () => ({ items: await deps.pipelines.list() }),
    }),
    route({
      method: "GET",
      path: "/pipelines/{id}",
      scope: "config:read",
      tag: "pipelines",
      summary: "Get one pipeline.",
      response: Pipeline,
      handler: ({ params }) => deps.pipelines.get(params.id!),
    }),
    route({
      method: "PUT",
      path: "/pipelines/{id}",
      scope: "config:write",
      tag: "pipelines",
      summary: "Replace a pipeline's name, signal and (when given) topology.",
      body: PipelineBody,
      response: Pipeline,
      handler: ({ params, body, principal }) => deps.pipelines.replace(principal, params.id!, body),
    }),
    route({
      method: "DELETE",
      path: "/pipelines/{id}",
      scope: "config:write",
      tag: "pipelines",
      summary: "Delete a pipeline; 409 while routes use it.",
      status: 204,
      handler: ({ params, principal }) => deps.pipelines.delete(principal, params.id!),
    }),
    route({
      method: "GET",
      path: "/collectors/{id}/pipelines",
      scope: "config:read",
      tag: "pipelines",
      summary:
        "The pipelines that apply to a collector in the working tree and why: via a route (explicit assignment) or via the pipeline's matchers, which its attributes satisfy.",
      response: AppliedPipelinesSchema,
      handler: async ({ params }) => ({ items: await deps.pipelines.forCollector(params.id!) }),
    }),
    route({
      method: "GET",
      path: "/pipelines/{id}/topology",
      scope: "config:read",
      tag: "pipelines",
      summary: "The pipeline's graph: nodes (source, processor, destination) and edges.",
      response: Topology,
      handler: async ({ params }) => (await deps.pipelines.get(params.id!)).topology,
    }),
    route({
      method: "PUT",
      path: "/pipelines/{id}/topology",
      scope: "config:write",
      tag: "pipelines",
      summary: "Save a new graph; every problem is named by node or edge id. With ?base, 409 stale_version when someone else saved since.",
      body: Topology,
      query: Type.Object(
        {
          base: Type.Optional(
            Type.String({ minLength: 1, maxLength: 20, description: "The tag (shared/topology-tag.ts) of the graph this edit started from." }),
          ),
        },
        { additionalProperties: false },
      ),
      response: Topology,
      handler: async ({ params, body, query, principal }) => (await deps.pipelines.setTopology(principal, params.id!, body, query.base)).topology,
    }),
    route({
      method: "POST",
      path: "/pipelines/{id}/topology/preview",
      scope: "config:read",
      tag: "pipelines",
      summary:
        "Render a graph (as returned by GET topology) without saving anything. With collectorId: that collector's whole config as publish renders it (its runtime, reported version and attributes), byte for byte what it is delivered once the graph is committed and published, secrets as markers. Needs collectors:read too. Without: the pipeline on its own for runtime at version (default: what install.sh installs). renderedFor says which.",
      body: Topology,
      query: Type.Object(
        {
          collectorId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "Render as publish would for this collector." })),
          runtime: Type.Optional(Runtime),
          version: Type.Optional(
            Type.String({ minLength: 1, maxLength: 64, description: "Without collectorId: the collector release to render for, e.g. 0.143.0." }),
          ),
        },
        { additionalProperties: false },
      ),
      response: PipelinePreviewSchema,
      handler: async ({ params, body, query, principal }): Promise<PipelinePreview> => {
        const pipeline = await deps.pipelines.get(params.id!);
        const snapshot = await deps.configStore.worktree();
        const edited = { ...pipeline, topology: validateTopology(body, pipeline.signal, snapshot) };
        if (query.collectorId !== undefined) {
          for (const key of ["runtime", "version"] as const) {
            if (query[key] !== undefined) {
              throw new ValidationError(`A collector's preview uses its own ${key}; leave ${key} out or leave collectorId out.`, [
                { path: key, message: `cannot be given with collectorId` },
              ]);
            }
          }
          // The answer shows the collector's name and its attribute values as its config holds them.
          if (!principal.scopes.has("collectors:read")) throw new ForbiddenError("collectors:read");
          const collector = await deps.collectors.get(query.collectorId);
          return previewForCollector(snapshot, edited, collector, deps.collectors.trust.keys());
        }
        const runtime = query.runtime ?? "otelcol";
        if (query.version !== undefined && runtime === "otelcol" && parseCollectorVersion(query.version) === null) {
          throw new ValidationError(`'${query.version}' is not a collector release such as 0.144.0.`, [
            { path: "version", message: "must be a collector release such as 0.144.0" },
          ]);
        }
        const version = query.version ?? INSTALLED_VERSIONS[runtime];
        return {
          config: renderPipelinePreview(edited, snapshot.sources, snapshot.destinations, runtime, version),
          renderedFor: { runtime, version, versionFrom: query.version === undefined ? "installer" : "requested", collector: null },
          differences: pipelinePreviewDifferences(edited, snapshot.sources, runtime),
        };
      },
    }),
    route({
      method: "GET",
      path: "/pipelines/{id}/rates",
      scope: "health:read",
      tag: "pipelines",
      summary:
        "Live records/s in and out and errors/s per node of the pipeline, from the collectors' own metrics: for `collector`, or summed over the first 50 collectors the pipeline applies to.",
      query: Type.Object({ collector: Type.Optional(Type.String()) }),
      response: PipelineRatesSchema,
      handler: async ({ params, query }) => {
        await deps.pipelines.get(params.id!);
        return pipelineRates(deps, params.id!, query.collector);
      },
    }),
    route({
      method: "POST",
      path: "/pipelines/{id}/dry-run",
      scope: "config:read",
      tag: "pipelines",
      summary:
        "Run OTLP JSON logs through the pipeline's processor chain (or the given one) and return what survives, with whether that result holds on both runtimes for each log source type that may feed the pipeline.",
      body: DryRunBody,
      response: DryRunAnswerSchema,
      maxBodyBytes: DRY_RUN_LIMIT,
      handler: async ({ params, body }) => {
        const pipeline = await deps.pipelines.get(params.id!);
        const chain = body.processors
          ? body.processors.map((p, i) => ({ nodeId: p.id ?? `step-${i + 1}`, type: p.type, config: p.config ?? {} }))
          : processorChain(pipeline.topology);
        // Off the event loop, with a hard deadline: the conditions are the caller's.
        const result = await dryRunIsolated(body.input, chain);
        const types = logSourceTypesFeeding(pipeline, (await deps.configStore.worktree()).sources);
        const configured = chain.map((p, i) => ({
          type: p.type,
          config: p.config,
          path: body.processors ? `processors[${i}].config` : `topology.nodes[${p.nodeId}].processor.config`,
        }));
        const runtimes = chainRuntimeParity(types, configured);
        // The output arrives as JSON text; it is sent as it is rather than parsed and stringified again here.
        return new Response(`{"output":${result.output},"steps":${JSON.stringify(result.steps)},"runtimes":${JSON.stringify(runtimes)}}`, {
          headers: { "Content-Type": "application/json; charset=utf-8" },
        });
      },
    }),
  ];
}
