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
    failed: Listed(
      Type.Composite([Named, Type.Object({ error: Nullable(Type.String()) })]),
      "Their config failed: the target they were given reported failed (whichever rollout gave it). The first few by id.",
    ),
    offline: Listed(Named, "Offline: nothing reaches them. The first few by id (the collector list filtered by status=offline has them all)."),
    unrenderable: Listed(
      Type.Composite([Named, Type.Object({ error: Type.String() })]),
      "Their config cannot be rendered, so a publish or an attribute change left them on the one they run (their render failure). The first few by id.",
    ),
    pinned: Listed(
      Type.Composite([Named, Type.Object({ actor: Type.String(), at: DateTime })]),
      "Pinned by a rollback: fleet publishes leave them on that config until unpinned. The first few by id.",
    ),
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
      {
        description:
          "The staged rollout in progress, else the latest publish to the fleet (as GET /publish/status?scope=fleet, without the per-collector list): not a later one to one collector, a rollback or an attribute change.",
      },
    ),
    throughput: Type.Object(
      {
        reporting: Type.Integer({ description: "Collectors counted now: they reported their own metrics inside the window and are not offline." }),
        byRecords: Type.Array(Ranked, { maxItems: DASHBOARD_TOP, description: "Highest records/s received (sum over receivers)." }),
        byErrors: Type.Array(Ranked, {
          maxItems: DASHBOARD_TOP,
          description: "Highest errors/s (refused or failed items, every component); only collectors with errors.",
        }),
      },
      { description: "From the own-metrics window in this server's memory (about the last 5 minutes)." },
    ),
    fleetRate: Type.Object(
      {
        current: Nullable(
          Type.Number({
            description:
              "Records/s received fleet-wide now: the history's newest bucket, the latest 15 s every reporting collector (reported inside the window, not offline) has covered; null when none reports.",
          }),
        ),
        collectors: Nullable(
          Type.Integer({
            description: "Collectors whose records are in that bucket: a collector that went offline since may still be (it took those records in then).",
          }),
        ),
        history: Type.Array(Type.Object({ time: DateTime, value: Type.Number() }), {
          description:
            "Fleet-wide records/s taken in, the last hour in 15 s buckets (each bucket's end); buckets where no collector measured anything are left out.",
        }),
      },
      { description: "Fleet-wide records/s: the current sum, and its last hour for the dashboard's chart." },
    ),
  },
  { title: "Dashboard" },
);
export type Dashboard = Static<typeof DashboardSchema>;
