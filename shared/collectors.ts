/**
 * A collector as the REST API answers it (/collectors), declared once for the
 * server's registry and routes, the OpenAPI document and the UI's collector pages.
 */
import { Type, type Static } from "@sinclair/typebox";
import { COLLECTOR_STATUSES } from "./collector-status.ts";
import { StringMap } from "./schema.ts";
import { MANAGEMENT_MODES } from "./vocabulary.ts";
import { PublishPlanSchema, RolloutSchema } from "./rollouts.ts";

export const ManagementModeSchema = Type.Union(
  MANAGEMENT_MODES.map((m) => Type.Literal(m)),
  { errorMessage: `must be one of ${MANAGEMENT_MODES.join(", ")}` },
);
export const EnvironmentSchema = Type.Union([Type.String({ maxLength: 200 }), Type.Null()]);
export const CollectorStatusSchema = Type.Union(COLLECTOR_STATUSES.map((s) => Type.Literal(s)));

/** What the control channel last said about a connected collector. */
export const CollectorHealthSchema = Type.Object({
  channel: Type.Union([Type.Literal("opamp"), Type.Literal("remotecfg")]),
  /** Seconds between contacts the collector promised (OpAMP heartbeat or poll interval); offline after 3×. */
  intervalSeconds: Type.Number({ description: "Promised seconds between contacts; offline after three times this." }),
  /** The collector's own health report; null when its channel does not carry one. */
  healthy: Type.Union([Type.Boolean(), Type.Null()]),
  /** Why it is degraded: its health message or the failed config's error. */
  error: Type.Union([Type.String(), Type.Null()]),
  /**
   * False for an OpAMP agent without the AcceptsRemoteConfig capability (a
   * collector run from its own file, without the supervisor): it reports but
   * is never sent config, so rollouts count it apart. Absent on records from
   * before it was kept.
   */
  acceptsRemoteConfig: Type.Optional(
    Type.Boolean({
      description:
        "False: reporting only — the collector cannot accept remote config (OpAMP without AcceptsRemoteConfig, e.g. run from its own file); run it under the OpAMP supervisor.",
    }),
  ),
});
export type CollectorHealth = Static<typeof CollectorHealthSchema>;

export const CollectorSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    environment: EnvironmentSchema,
    managementMode: ManagementModeSchema,
    tags: StringMap,
    /**
     * What the collector reports about itself (OpAMP AgentDescription attributes, Alloy remotecfg
     * attributes and local_attributes), bounded; absent until it reports any. Facts, not authority:
     * matchers read a reported key only when an admin trusts it, and tags and environment win over
     * these on the same key (see `attributes` on GET /collectors/{id}).
     */
    reported: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description:
          "Attributes the collector reports (OpAMP AgentDescription; Alloy remotecfg attributes and local_attributes), at most 64 keys and 4,096 characters.",
      }),
    ),
    cloneOf: Type.Optional(
      Type.Object(
        {
          collectorId: Type.String(),
          name: Type.String(),
          instanceUid: Type.String({ description: "The instance UID both presented (hex)." }),
          at: Type.String({ format: "date-time" }),
        },
        {
          description:
            "Set when this collector presented another live collector's OpAMP instance UID (a cloned VM image): svc gave it a new instance UID (AgentIdentification.new_instance_uid) and made it its own collector, with that one's environment and tags.",
        },
      ),
    ),
    status: CollectorStatusSchema,
    lastSeen: Type.Union([Type.String({ format: "date-time" }), Type.Null()], { description: "Last contact, to within 15 s." }),
    health: Type.Union([CollectorHealthSchema, Type.Null()]),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
  },
  { title: "Collector" },
);
export type Collector = Static<typeof CollectorSchema>;

export const AttributeOriginSchema = Type.Union([Type.Literal("reported"), Type.Literal("set"), Type.Literal("virtual")]);
export const CollectorAttributeSchema = Type.Object({
  value: Type.String(),
  origin: AttributeOriginSchema,
  targets: Type.Boolean({
    description: "Whether matchers read it: set and virtual ones always, a reported one only when an admin trusts its key (GET /system/trusted-attributes).",
  }),
});

/** One collector with every attribute, where each comes from, and whether matchers read it. */
export const CollectorDetailSchema = Type.Composite(
  [
    CollectorSchema,
    Type.Object({
      attributes: Type.Record(Type.String(), CollectorAttributeSchema, {
        description:
          "Every attribute: reported ones, overridden by set ones (tags, environment), and the virtual collector.id, collector.name, collector.mode. Matchers read those with `targets` true; attribute references read them all.",
      }),
    }),
  ],
  { title: "CollectorDetail" },
);
export type CollectorDetail = Static<typeof CollectorDetailSchema>;

/** A restart asked for: the collector is sent the OpAMP restart command once. */
export const RestartRequestSchema = Type.Object(
  {
    requestId: Type.String(),
    requestedAt: Type.String({ format: "date-time" }),
  },
  { title: "RestartRequest" },
);

/** POST /matchers/preview: how many collectors the matchers select, and the first of them. */
export const MatchersPreviewSchema = Type.Object({
  count: Type.Integer({ description: "Every collector the matchers select." }),
  items: Type.Array(CollectorSchema, { description: "The first of them, in id order." }),
});
export type MatchersPreview = Static<typeof MatchersPreviewSchema>;

const TagEditResultFields = {
  matched: Type.Integer({ description: "Collectors the matchers selected." }),
  changed: Type.Integer({ description: "Of those, collectors whose tags change." }),
};

const EditPlan = Type.Union([PublishPlanSchema, Type.Null()], {
  description:
    "What the edit would change, as a publish plan at the commit the collectors are on; null when nothing was published to them (it changes no config).",
});

/** POST /collectors/tags: what the edit selected and changed, and the rollout that delivers it. */
export const TagEditAnswerSchema = Type.Object({
  ...TagEditResultFields,
  rollout: Type.Union([RolloutSchema, Type.Null()], {
    description: "The rollout that delivers the change; null when no config changed and no collector was skipped.",
  }),
});
export type TagEditAnswer = Static<typeof TagEditAnswerSchema>;

/** POST /collectors/tags/plan: what the edit would select and change, and its plan. */
export const TagEditPlanSchema = Type.Object({ ...TagEditResultFields, plan: EditPlan });

/** POST /collectors/{id}/edit-plan: the plan of what an edit would change. */
export const EditPlanAnswerSchema = Type.Object({ plan: EditPlan });
export type EditPlanAnswer = Static<typeof EditPlanAnswerSchema>;
