/**
 * The fleet at a glance as the REST API answers it (GET /dashboard), declared
 * once for the server's route, the OpenAPI document and the UI's landing page.
 * Every count comes with the few names behind it that the page links to; the
 * lists stay short (SAMPLE) so the answer is small at any fleet size.
 */
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { COLLECTOR_STATUSES, type CollectorStatus } from "./collector-status.ts";
import { RolloutStatusSchema } from "./rollouts.ts";
import { DateTime, Nullable } from "./schema.ts";
import { MANAGEMENT_MODES, type ManagementMode } from "./vocabulary.ts";

/** Names listed beside a count (failures, drifted, reporting only). */
export const DASHBOARD_SAMPLE = 10;
/** Collectors in each top list. */
export const DASHBOARD_TOP = 5;

const Named = Type.Object({ id: Type.String(), name: Type.String() });
const Ranked = Type.Object({ id: Type.String(), name: Type.String(), rate: Type.Number({ description: "Per second." }) });

const Listed = <T extends TSchema>(item: T, description: string) =>
  Type.Object({ count: Type.Integer(), sample: Type.Array(item, { maxItems: DASHBOARD_SAMPLE, description }) });

export const DashboardSchema = Type.Object(
  {
    generatedAt: DateTime,
    collectors: Type.Object({
      total: Type.Integer(),
      // Unsafe only to name the keys in the static type (a Record over a mapped union types them as {}).
      byStatus: Type.Unsafe<Record<CollectorStatus, number>>(Type.Record(Type.Union(COLLECTOR_STATUSES.map((s) => Type.Literal(s))), Type.Integer())),
      byMode: Type.Unsafe<Record<ManagementMode, number>>(Type.Record(Type.Union(MANAGEMENT_MODES.map((m) => Type.Literal(m))), Type.Integer())),
    }),
    reportingOnly: Listed(Named, "Connected (online or degraded) without the AcceptsRemoteConfig capability: no config reaches them. The first few by id."),
    drifted: Listed(
      Type.Composite([Named, Type.Object({ reason: Nullable(Type.String()) })]),
      "Online, current, and running something other than their applied target (as GET /collectors/drifted). The first few by id.",
    ),
    rollout: Type.Object(
      {
        rolloutId: RolloutStatusSchema.properties.rolloutId,
        commit: RolloutStatusSchema.properties.commit,
        state: RolloutStatusSchema.properties.state,
        staged: Type.Boolean({ description: "A staged rollout (batches); its state says whether it is running or paused." }),
        pausedReason: Nullable(Type.String()),
        total: Type.Integer(),
        counts: RolloutStatusSchema.properties.counts,
        batches: Nullable(Type.Object({ total: Type.Integer(), released: Type.Integer() })),
        failures: Type.Array(Type.Composite([Named, Type.Object({ error: Nullable(Type.String()) })]), {
          maxItems: DASHBOARD_SAMPLE,
          description: "The first few collectors whose config failed, with the error they reported.",
        }),
      },
      { description: "The latest publish or rollback (as GET /rollouts/status, without the per-collector list)." },
    ),
    throughput: Type.Object(
      {
        reporting: Type.Integer({ description: "Collectors whose own metrics this server holds rates for." }),
        byRecords: Type.Array(Ranked, { maxItems: DASHBOARD_TOP, description: "Highest records/s received (sum over receivers)." }),
        byErrors: Type.Array(Ranked, { maxItems: DASHBOARD_TOP, description: "Highest errors/s (refused or failed items, every component); only collectors with errors." }),
      },
      { description: "From the own-metrics window in this server's memory (about the last 5 minutes)." },
    ),
    fleetRate: Type.Object(
      {
        current: Nullable(Type.Number({ description: "Records/s received fleet-wide now: the sum over reporting collectors; null when none reports." })),
        history: Type.Array(Type.Object({ time: DateTime, value: Type.Number() }), {
          description: "Fleet-wide records/s taken in, the last hour in 15 s buckets (each bucket's end); buckets where no collector measured anything are left out.",
        }),
      },
      { description: "Fleet-wide records/s: the current sum, and its last hour for the dashboard's chart." },
    ),
  },
  { title: "Dashboard" },
);
export type Dashboard = Static<typeof DashboardSchema>;
