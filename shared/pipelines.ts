/**
 * A pipeline dry-run's answer (POST /pipelines/{id}/dry-run), its preview's
 * (POST /pipelines/{id}/topology/preview) and its live rates', declared once for the server's
 * route, the OpenAPI document and the UI's pipeline editor.
 */
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { SIGNALS, type PipelineRecord, type Topology as TopologyRecord } from "./config-records.ts";
import { RUNTIMES } from "./vocabulary.ts";
import { RuntimeDifferenceSchema } from "./rollouts.ts";

export const DryRunAnswerSchema = Type.Object({
  output: Type.Unknown({ description: "The records that survive the chain, as OTLP JSON logs (the Final Output)." }),
  steps: Type.Array(
    Type.Object({
      nodeId: Type.String(),
      type: Type.String(),
      in: Type.Integer({ description: "Records that reached this step." }),
      out: Type.Integer({ description: "Records it passed on." }),
      error: Type.Optional(Type.String({ description: "Why the step dropped the whole batch (a filter with error_mode propagate)." })),
      dropped: Type.Array(Type.Integer(), {
        description: "The input records this step dropped, by their place in the input: resources, scopes and records in order, counted from 0.",
      }),
      notSimulated: Type.Optional(
        Type.String({ description: "Set when the dry-run did not run this step (a transform): records passed it unchanged, unlike on the collector." }),
      ),
    }),
  ),
  runtimes: Type.Array(
    Type.Object({
      sourceType: Type.String(),
      holds: Type.Boolean({
        description: "The result holds on Alloy (remote config) as on the OpenTelemetry Collector (OpAMP) for records of this source type.",
      }),
      problems: Type.Array(Type.Object({ path: Type.String(), message: Type.String() })),
    }),
    {
      description:
        "Per log source type that may feed the pipeline: whether the chain reads only fields both runtimes deliver alike for it. Where holds is false, the problems say what differs, and a route of that source type through this chain is refused on Alloy collectors.",
    },
  ),
});
export type DryRunAnswer = Static<typeof DryRunAnswerSchema>;
export type DryRunStep = DryRunAnswer["steps"][number];

/** Why a pipeline applies to a collector: its matchers hold for the collector's attributes, or a route names it. */
export const AppliedPipelineSchema = Type.Object(
  {
    pipelineId: Type.String(),
    name: Type.String(),
    via: Type.Union([
      Type.Object({ matchers: Type.Array(Type.String(), { description: "The pipeline's matchers, all of which hold for the collector's attributes." }) }),
      Type.Object({ route: Type.String({ description: "The route's id." }), sourceId: Type.String() }),
    ]),
  },
  { title: "AppliedPipeline" },
);
export type AppliedPipeline = Static<typeof AppliedPipelineSchema>;
export const AppliedPipelinesSchema = Type.Object({ items: Type.Array(AppliedPipelineSchema) });
export type AppliedPipelines = Static<typeof AppliedPipelinesSchema>;

/** What a preview was rendered for: a collector as publish renders it, or a runtime at a named version. */
export const PreviewTargetSchema = Type.Object(
  {
    runtime: Type.Union(RUNTIMES.map((r) => Type.Literal(r))),
    version: Type.Union([Type.String(), Type.Null()], {
      description: "The collector version rendered for; null: the collector never reported one, so the form every supported version accepts.",
    }),
    versionFrom: Type.Union([Type.Literal("reported"), Type.Literal("requested"), Type.Literal("installer")], {
      description:
        "reported: the collector's own service.version (null when it reported none); requested: the caller's ?version; installer: what installer/install.sh installs.",
    }),
    collector: Type.Union([
      Type.Object({
        id: Type.String(),
        name: Type.String(),
        routed: Type.Boolean({ description: "A route of this collector names the pipeline." }),
        matched: Type.Boolean({ description: "The pipeline's matchers hold for the collector's attributes." }),
      }),
      Type.Null(),
    ]),
  },
  { title: "PreviewTarget" },
);
export type PreviewTarget = Static<typeof PreviewTargetSchema>;
export const PipelinePreviewSchema = Type.Object({
  config: Type.String({
    description:
      "With a collector: its whole config exactly as a publish of the working tree with this graph would deliver it, secrets as their markers; without: the pipeline on its own.",
  }),
  renderedFor: PreviewTargetSchema,
  differences: Type.Array(RuntimeDifferenceSchema, {
    description:
      "Warnings: on Alloy, the source types rendered whose data differs from what the OpenTelemetry Collector (OpAMP) delivers, which svc cannot normalise; empty for the OpenTelemetry Collector (OpAMP).",
  }),
});
export type PipelinePreview = Static<typeof PipelinePreviewSchema>;

/** Live rates of a pipeline's nodes (GET /pipelines/{id}/rates, server/api/pipeline-rates.ts). */
const Rate = Type.Union([Type.Number(), Type.Null()]);
export const PipelineRatesSchema = Type.Object({
  collectors: Type.Integer({ description: "How many collectors were summed." }),
  applied: Type.Integer({ description: "How many collectors the pipeline applies to (only the first 50 are summed)." }),
  nodes: Type.Array(Type.Object({ nodeId: Type.String(), in: Rate, out: Rate, errors: Rate })),
  choices: Type.Array(Type.Object({ id: Type.String(), name: Type.String() }), {
    description: "The first 50 collectors the pipeline applies to, to pick one.",
  }),
});
export type PipelineRates = Static<typeof PipelineRatesSchema>;

/** A pipeline as the API takes and answers it: its graph, and the attribute matchers that assign it to collectors. */
export const Id = Type.String({ minLength: 1, maxLength: 200 });
export const ConfigObject = Type.Record(Type.String(), Type.Unknown(), {
  description: 'Settings; the catalog gives the schema per type. A string value may reference a collector attribute as `{{attr "KEY"}}` (not in OTTL).',
});
export const Signal = Type.Union(
  SIGNALS.map((s) => Type.Literal(s)),
  { errorMessage: `must be one of ${SIGNALS.join(", ")}` },
);

const NodeId = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: "^[A-Za-z0-9][A-Za-z0-9_.-]*$",
  errorMessage: "must be 1–100 letters, digits, '_', '.' or '-'",
});

export const TopologyNode = Type.Object(
  {
    id: NodeId,
    kind: Type.Union([Type.Literal("source"), Type.Literal("processor"), Type.Literal("destination")]),
    ref: Type.Optional(Id),
    processor: Type.Optional(
      Type.Object({ type: Type.String({ minLength: 1, maxLength: 100 }), config: Type.Optional(ConfigObject) }, { additionalProperties: false }),
    ),
    position: Type.Optional(Type.Object({ x: Type.Number(), y: Type.Number() }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);

export const TopologyEdge = Type.Object({ id: NodeId, source: NodeId, target: NodeId }, { additionalProperties: false });

export const Topology = Type.Object(
  {
    nodes: Type.Array(TopologyNode, { maxItems: 500, errorMessage: "must be a list of at most 500 nodes" }),
    edges: Type.Array(TopologyEdge, { maxItems: 2000, errorMessage: "must be a list of at most 2000 edges" }),
  },
  { additionalProperties: false, title: "Topology" },
);

export const PipelineMatchers = Type.Array(Type.String({ maxLength: 1000 }), {
  maxItems: 50,
  description:
    'Attribute matchers, Alertmanager syntax (`env=prod`, `region=~"us-.*"`, `team!=test`; regexps fully anchored, RE2): every collector whose attributes match all of them runs the pipeline. Empty: routes alone assign it.',
});

export const Pipeline = Type.Object(
  { id: Type.String(), name: Type.String(), signal: Signal, topology: Topology, matchers: Type.Optional(PipelineMatchers) },
  { title: "Pipeline" },
);

export const PipelineListSchema = Type.Object({ items: Type.Array(Pipeline) });
export type PipelineList = Static<typeof PipelineListSchema>;
/**
 * The same schemas as answers: a stored pipeline's processors always carry a
 * config, which the schema (shared with the request bodies) leaves optional.
 */
export const PipelineAnswer = Pipeline as TSchema as TSchema & { static: PipelineRecord };
export const TopologyAnswer = Topology as TSchema as TSchema & { static: TopologyRecord };
export const PipelineListAnswer = PipelineListSchema as TSchema as TSchema & { static: { items: PipelineRecord[] } };
