/** Request and answer schemas of the configuration records, shared by their routes. */
import { Type } from "@sinclair/typebox";
import { OVERRIDES_DESCRIPTION } from "../../shared/config-answers.ts";
import { SIGNALS } from "../../shared/config-records.ts";
import { StringMap } from "../../shared/schema.ts";

export const Name = Type.String({ minLength: 1, maxLength: 200, pattern: "\\S", errorMessage: "must be a non-blank string of at most 200 characters" });
export const Id = Type.String({ minLength: 1, maxLength: 200 });
export const ConfigObject = Type.Record(Type.String(), Type.Unknown(), { description: "Settings; the catalog gives the schema per type. A string value may reference a collector attribute as `{{attr \"KEY\"}}` (not in OTTL)." });
/** Sensitive fields on a write (secrets/values.ts): every form the API takes. */
const SENSITIVE_WRITE =
  "A field the catalog marks `sensitive` takes a string (a new secret: stored encrypted, never shown again), " +
  "the object a read shows in its place (`{secret: true, …}`: keep the stored secret), `{env: NAME}` (read from the collector host's environment) " +
  "or, where the catalog also says `plainAllowed`, `{value, secret: false}` (not secret, shown as written).";
/** Attribute references (shared/attribute-refs.ts), checked by the catalog with the rest of a config. */
const ATTRIBUTE_REFERENCES =
  'A string value may reference an attribute of the collector it is rendered for as `{{attr "KEY"}}`, filled in per collector at publish; ' +
  "not in keys, secrets, OTTL, host paths or the fields the catalog marks `noAttributeReferences`.";
const ComponentConfigBody = Type.Record(Type.String(), Type.Unknown(), { description: `Settings; the catalog gives the schema per type. ${SENSITIVE_WRITE} ${ATTRIBUTE_REFERENCES}` });
const OverridesBody = Type.Record(Type.String(), Type.Unknown(), { description: `${OVERRIDES_DESCRIPTION} ${SENSITIVE_WRITE} ${ATTRIBUTE_REFERENCES}` });
export const Signal = Type.Union(SIGNALS.map((s) => Type.Literal(s)), { errorMessage: `must be one of ${SIGNALS.join(", ")}` });

export const ComponentBody = Type.Object(
  { name: Name, type: Type.String({ minLength: 1, maxLength: 100 }), config: Type.Optional(ComponentConfigBody) },
  { additionalProperties: false },
);

const NodeId = Type.String({ minLength: 1, maxLength: 100, pattern: "^[A-Za-z0-9][A-Za-z0-9_.-]*$", errorMessage: "must be 1–100 letters, digits, '_', '.' or '-'" });

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

const Matchers = Type.Array(Type.String({ maxLength: 1000 }), {
  maxItems: 50,
  description:
    'Attribute matchers, Alertmanager syntax (`env=prod`, `region=~"us-.*"`, `team!=test`; regexps fully anchored, RE2): every collector whose attributes match all of them runs the pipeline. Empty: routes alone assign it.',
});

export const PipelineBody = Type.Object(
  { name: Name, signal: Signal, topology: Type.Optional(Topology), matchers: Type.Optional(Matchers) },
  { additionalProperties: false },
);

export const Pipeline = Type.Object({ id: Type.String(), name: Type.String(), signal: Signal, topology: Topology, matchers: Type.Optional(Matchers) }, { title: "Pipeline" });

export const RouteBody = Type.Object({ collectorId: Id, sourceId: Id, pipelineId: Id }, { additionalProperties: false });

export const SourceActivationBody = Type.Object(
  { sourceId: Id, configOverrides: Type.Optional(OverridesBody) },
  { additionalProperties: false },
);
export const DestinationActivationBody = Type.Object(
  { destinationId: Id, configOverrides: Type.Optional(OverridesBody), tags: Type.Optional(StringMap) },
  { additionalProperties: false },
);
