/**
 * REST: /dashboard — the fleet at a glance for the UI's landing page, in one
 * call: collectors by status and mode, what needs attention (failed, offline,
 * unrenderable, pinned, drifted, reporting only), the latest fleet rollout,
 * the top collectors by throughput and errors, and the fleet's records/s.
 * Scope `collectors:read`: it names collectors.
 *
 * Cost at fleet scale: what it shows, not the fleet (issue 36 item 3). The
 * counts and the offline and reporting-only ids are kept beside the collector
 * view (collectors/fleet-counts.ts), the attention lists beside the targets
 * (rollout/attention-sets.ts); only the collectors the throughput window holds
 * are offered to it; the latest fleet rollout's counts and first failures
 * are kept beside the targets too (rollout/latest-fleet.ts), the same figures
 * as GET /publish/status?scope=fleet.
 */
import { DASHBOARD_SAMPLE, DASHBOARD_TOP, DashboardSchema, type Dashboard } from "../../shared/dashboard.ts";
import type { Collectors } from "../collectors/collectors.ts";
import { route, type Route } from "../http/route.ts";
import type { SortedIds } from "../lib/sorted-ids.ts";
import type { Attention } from "../rollout/attention.ts";
import { summaryOfStatus, type LatestFleetRollout } from "../rollout/latest-fleet.ts";
import type { StagedRollouts } from "../rollout/staged.ts";
import type { Telemetry } from "../telemetry/index.ts";
import { FleetThroughput } from "../telemetry/top.ts";

/** What the /dashboard route uses. */
export interface DashboardApiDeps {
  collectors: Pick<Collectors, "counters" | "get">;
  attention: Pick<Attention, "summary">;
  staged: Pick<StagedRollouts, "status">;
  fleetRollout: Pick<LatestFleetRollout, "summary">;
  telemetry: Telemetry;
}

/** The first `DASHBOARD_SAMPLE` ids of a set in id order, with their names, and the set's size. */
function listed(ids: SortedIds, lookup: (id: string) => { name: string } | undefined) {
  const sample: { id: string; name: string }[] = [];
  for (const id of ids.values()) {
    if (sample.length === DASHBOARD_SAMPLE) break;
    const collector = lookup(id);
    if (collector) sample.push({ id, name: collector.name });
  }
  return { count: ids.size, sample };
}

/**
 * The collector figures from the counters kept beside the view, and the
 * throughput from the collectors the window holds (not a walk of the fleet).
 */
async function fleet(deps: DashboardApiDeps) {
  const { counts, lookup } = await deps.collectors.counters();
  const throughput = new FleetThroughput(deps.telemetry.window, DASHBOARD_TOP);
  for (const [id] of deps.telemetry.window.entries()) {
    const collector = lookup(id);
    if (collector) throughput.offer(id, collector.name, collector.status === "offline");
  }
  return {
    collectors: counts.collectors(),
    reportingOnly: listed(counts.reportingOnly, lookup),
    offline: listed(counts.offline, lookup),
    throughput: throughput.result(),
  };
}

/** The latest rollout without its per-collector list, and the first failures by name. */
async function latestRollout(deps: DashboardApiDeps): Promise<Dashboard["rollout"]> {
  const kept = await deps.fleetRollout.summary(DASHBOARD_SAMPLE);
  if (kept) return kept;
  // No pointer names the latest (state older than the pointers): the status searches the rollouts.
  const status = await deps.staged.status(undefined, "fleet");
  return summaryOfStatus(status, DASHBOARD_SAMPLE, async (id) => (await deps.collectors.get(id).catch(() => null))?.name);
}

export async function dashboard(deps: DashboardApiDeps): Promise<Dashboard> {
  const [summary, rollout, attention] = await Promise.all([fleet(deps), latestRollout(deps), deps.attention.summary(DASHBOARD_SAMPLE)]);
  const { reporting, byRecords, byErrors, current, currentCollectors, history } = summary.throughput;
  return {
    generatedAt: new Date().toISOString(),
    collectors: summary.collectors,
    reportingOnly: summary.reportingOnly,
    offline: summary.offline,
    failed: { count: attention.failed.count, sample: attention.failed.sample.map((f) => ({ id: f.collectorId, name: f.name, error: f.error })) },
    unrenderable: {
      count: attention.unrenderable.count,
      sample: attention.unrenderable.sample.map((f) => ({ id: f.collectorId, name: f.name, error: f.error })),
    },
    pinned: { count: attention.pinned.count, sample: attention.pinned.sample.map((p) => ({ id: p.collectorId, name: p.name, actor: p.actor, at: p.at })) },
    drifted: { count: attention.drifted.count, sample: attention.drifted.sample.map((d) => ({ id: d.collectorId, name: d.name, reason: d.reason })) },
    rollout,
    throughput: { reporting, byRecords, byErrors },
    fleetRate: { current, collectors: currentCollectors, history: history.map((p) => ({ time: new Date(p.time).toISOString(), value: p.value })) },
  };
}

export function dashboardRoutes(deps: DashboardApiDeps): Route[] {
  return [
    route({
      method: "GET",
      path: "/dashboard",
      scope: "collectors:read",
      tag: "system",
      summary:
        "The fleet at a glance: collectors by status and mode; what needs attention (failed, offline, unrenderable, pinned, drifted and reporting-only collectors, each counted with the first few by id); the latest fleet rollout's progress and failures; the top collectors by records/s and errors/s; and fleet-wide records/s now and over the last hour in 15 s buckets (`fleetRate`), one series: `current` is its newest bucket.",
      response: DashboardSchema,
      handler: () => dashboard(deps),
    }),
  ];
}
