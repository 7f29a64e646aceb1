/**
 * REST: /dashboard — the fleet at a glance for the UI's landing page, in one
 * call: collectors by status and mode, what needs attention (failed, offline,
 * unrenderable, pinned, drifted, reporting only), the latest fleet rollout,
 * the top collectors by throughput and errors, and the fleet's records/s.
 * Scope `collectors:read`: it names collectors.
 *
 * Cost at fleet scale: one pass over the in-memory collector view (counts,
 * reporting only, offline, and each collector offered to the throughput
 * window, which keeps only its top few); the targets and render failures
 * from memory (Attention.attention, rollout/target-index.ts), no store list;
 * the rollout status is GET /publish/status?scope=fleet, from the same memory.
 */
import { COLLECTOR_STATUSES, type CollectorStatus } from "../../shared/collector-status.ts";
import { reportingOnly } from "../../shared/attention.ts";
import { DASHBOARD_SAMPLE, DASHBOARD_TOP, DashboardSchema, type Dashboard } from "../../shared/dashboard.ts";
import type { RolloutStatus } from "../../shared/rollouts.ts";
import { MANAGEMENT_MODES, type ManagementMode } from "../../shared/vocabulary.ts";
import type { Collectors } from "../collectors/collectors.ts";
import { route, type Route } from "../http/route.ts";
import type { Attention } from "../rollout/attention.ts";
import type { StagedRollouts } from "../rollout/staged.ts";
import type { Telemetry } from "../telemetry/index.ts";
import { FleetThroughput } from "../telemetry/top.ts";

/** What the /dashboard route uses. */
export interface DashboardApiDeps {
  collectors: Collectors;
  attention: Pick<Attention, "attention">;
  staged: StagedRollouts;
  telemetry: Telemetry;
}

const zeros = <K extends string>(keys: readonly K[]) => Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;

/** The first `DASHBOARD_SAMPLE` by id of a list already in id order, with its count. */
const listed = <T>(items: T[]) => ({ count: items.length, sample: items.slice(0, DASHBOARD_SAMPLE) });

/** The one pass over the fleet: counts, the reporting-only and offline samples, and throughput offers. */
async function fleet(deps: DashboardApiDeps) {
  const byStatus = zeros<CollectorStatus>(COLLECTOR_STATUSES);
  const byMode = zeros<ManagementMode>(MANAGEMENT_MODES);
  const reporting: { id: string; name: string }[] = [];
  const offline: { id: string; name: string }[] = [];
  let total = 0;
  const throughput = new FleetThroughput(deps.telemetry.window, DASHBOARD_TOP);
  await deps.collectors.each((c) => {
    total++;
    byStatus[c.status]++;
    byMode[c.managementMode]++;
    if (reportingOnly(c)) reporting.push({ id: c.id, name: c.name });
    if (c.status === "offline") offline.push({ id: c.id, name: c.name });
    throughput.offer(c.id, c.name, c.status === "offline");
  });
  // The view is unordered: the samples are the first ids, so they are stable between calls.
  const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : 1);
  return {
    collectors: { total, byStatus, byMode },
    reportingOnly: listed(reporting.sort(byId)),
    offline: listed(offline.sort(byId)),
    throughput: throughput.result(),
  };
}

/** The latest rollout without its per-collector list, and the first failures by name. */
async function latestRollout(deps: DashboardApiDeps): Promise<Dashboard["rollout"]> {
  const status: RolloutStatus = await deps.staged.status(undefined, "fleet");
  const failed = status.collectors.filter((c) => c.state === "failed").slice(0, DASHBOARD_SAMPLE);
  const failures = await Promise.all(
    failed.map(async (c) => ({ id: c.id, name: (await deps.collectors.get(c.id).catch(() => null))?.name ?? c.id, error: c.error ?? null })),
  );
  return {
    rolloutId: status.rolloutId,
    commit: status.commit,
    state: status.state,
    staged: status.batches !== undefined,
    pausedReason: status.pausedReason ?? null,
    total: status.total,
    counts: status.counts,
    batches: status.batches ? { total: status.batches.length, released: status.batches.filter((b) => b.released).length } : null,
    failures,
  };
}

export async function dashboard(deps: DashboardApiDeps): Promise<Dashboard> {
  const [summary, rollout, attention] = await Promise.all([fleet(deps), latestRollout(deps), deps.attention.attention()]);
  const { reporting, byRecords, byErrors, current, currentCollectors, history } = summary.throughput;
  return {
    generatedAt: new Date().toISOString(),
    collectors: summary.collectors,
    reportingOnly: summary.reportingOnly,
    offline: summary.offline,
    failed: listed(attention.failed.map((f) => ({ id: f.collectorId, name: f.name, error: f.error }))),
    unrenderable: listed(attention.unrenderable.map((f) => ({ id: f.collectorId, name: f.name, error: f.error }))),
    pinned: listed(attention.pinned.map((p) => ({ id: p.collectorId, name: p.name, actor: p.actor, at: p.at }))),
    drifted: listed(attention.drifted.map((d) => ({ id: d.collectorId, name: d.name, reason: d.reason }))),
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
