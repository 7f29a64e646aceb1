/** Request and answer schemas of the configuration records, shared by their routes. */
import { Type } from "@sinclair/typebox";
import { OVERRIDES_DESCRIPTION } from "../../shared/config-answers.ts";
import { Id, PipelineMatchers, Signal, Topology } from "../../shared/pipelines.ts";
import { StringMap } from "../../shared/schema.ts";

export const Name = Type.String({ minLength: 1, maxLength: 200, pattern: "\\S", errorMessage: "must be a non-blank string of at most 200 characters" });
/** Sensitive fields on a write (secrets/values.ts): every form the API takes. */
const SENSITIVE_WRITE =
  "A field the catalog marks `sensitive` takes a string (a new secret: stored encrypted, never shown again), " +
  "the object a read shows in its place (`{secret: true, …}`: keep the stored secret), `{env: NAME}` (read from the collector host's environment) " +
  "or, where the catalog also says `plainAllowed`, `{value, secret: false}` (not secret, shown as written).";
/** Attribute references (shared/attribute-refs.ts), checked by the catalog with the rest of a config. */
const ATTRIBUTE_REFERENCES =
  'A string value may reference an attribute of the collector it is rendered for as `{{attr "KEY"}}`, filled in per collector at publish; ' +
  "not in keys, secrets, OTTL, host paths or the fields the catalog marks `noAttributeReferences`.";
const ComponentConfigBody = Type.Record(Type.String(), Type.Unknown(), {
  description: `Settings; the catalog gives the schema per type. ${SENSITIVE_WRITE} ${ATTRIBUTE_REFERENCES}`,
});
const OverridesBody = Type.Record(Type.String(), Type.Unknown(), { description: `${OVERRIDES_DESCRIPTION} ${SENSITIVE_WRITE} ${ATTRIBUTE_REFERENCES}` });

export const ComponentBody = Type.Object(
  { name: Name, type: Type.String({ minLength: 1, maxLength: 100 }), config: Type.Optional(ComponentConfigBody) },
  { additionalProperties: false },
);

export const PipelineBody = Type.Object(
  { name: Name, signal: Signal, topology: Type.Optional(Topology), matchers: Type.Optional(PipelineMatchers) },
  { additionalProperties: false },
);

export const RouteBody = Type.Object({ collectorId: Id, sourceId: Id, pipelineId: Id }, { additionalProperties: false });

export const SourceActivationBody = Type.Object({ sourceId: Id, configOverrides: Type.Optional(OverridesBody) }, { additionalProperties: false });
export const DestinationActivationBody = Type.Object(
  { destinationId: Id, configOverrides: Type.Optional(OverridesBody), tags: Type.Optional(StringMap) },
  { additionalProperties: false },
);
