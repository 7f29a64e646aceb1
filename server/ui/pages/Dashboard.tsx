/**
 * The landing page after sign-in: the fleet at a glance from one call,
 * GET /api/v1/dashboard. Every number links to the list it counts (the
 * collector list filtered by status, mode or why a collector needs attention,
 * Rollouts for the latest fleet rollout), and
 * each empty part says what to do next.
 *
 * Live: collector, config_target and rollout events refetch (throttled, as a
 * fleet's heartbeats would otherwise refetch many times a second); rates are
 * not evented, so a slow poll refreshes them too.
 */
import { lazy, Suspense, type ReactNode } from "react";
import type { Dashboard } from "../../../shared/dashboard.ts";
import type { ApiError } from "../api.ts";
import { api } from "../client.ts";
import { useLoad } from "../load.ts";
import { EmptyState } from "../components/EmptyState.tsx";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { useLiveEvents } from "../events.ts";
import { formatRate, shortCommit } from "../format.ts";
import { Link } from "../router.tsx";
import "./Dashboard.css";
import { recordHref } from "../components/RecordName.tsx";
import { useThrottledCounter } from "../refresh.ts";
import { MODE_NAMES, RUNTIME_NAMES } from "../../../shared/vocabulary.ts";

/** uPlot is a separate chunk: only fetched once there is a history to draw. */
const Chart = lazy(() => import("../components/Chart.tsx").then((m) => ({ default: m.Chart })));

/** At most one refetch per this long however many events arrive. */
const EVENT_THROTTLE_MS = 2000;
/** Rates change without events: refetch this often while the page is open. */
const POLL_MS = 15_000;

const collectorsWhere = (query: Record<string, string>) => `/ui/collectors?${new URLSearchParams(query)}`;

/** The dashboard's answer, refetched on live events (throttled) and on a slow poll; the last answer stays shown while refetching. */
function useDashboard(): { data: Dashboard | null; error: ApiError | null } {
  const [events, bump] = useThrottledCounter(EVENT_THROTTLE_MS);
  // Each throttled burst of events loads it again and restarts the poll.
  const { data, error } = useLoad(() => api.get("/dashboard"), String(events), { everyMs: POLL_MS, pauseHidden: true });
  useLiveEvents(["collector", "config_target", "rollout"], bump);
  return { data, error };
}

export function DashboardPage() {
  const { data, error } = useDashboard();
  return (
    <section aria-labelledby="dashboard-title" className="dashboard">
      <div className="page-head">
        <h1 id="dashboard-title">Dashboard</h1>
        {data && <Updated at={data.generatedAt} />}
      </div>
      <ErrorMessage error={error} />
      {!data && !error && <p aria-live="polite">Loading…</p>}
      {data && data.collectors.total === 0 && <NoCollectors />}
      {data && data.collectors.total > 0 && (
        <>
          <FleetPanel collectors={data.collectors} />
          <div className="dash-grid">
            <RolloutPanel rollout={data.rollout} />
            <AttentionPanel attention={data} />
          </div>
          <FleetRatePanel fleetRate={data.fleetRate} reporting={data.throughput.reporting} />
          <div className="dash-grid">
            <TopPanel title="Top collectors by records/s" id="top-records-title" items={data.throughput.byRecords} empty={<NoRates />} />
            <TopPanel
              title="Top collectors by errors/s"
              id="top-errors-title"
              items={data.throughput.byErrors}
              empty={data.throughput.reporting === 0 ? <NoRates /> : <p className="dash-empty">No errors reported in the last minutes.</p>}
            />
          </div>
        </>
      )}
    </section>
  );
}

function Updated({ at }: { at: string }) {
  return (
    <p className="hint" aria-live="off">
      Updated <time dateTime={at}>{new Date(at).toLocaleTimeString()}</time> · live
    </p>
  );
}

/** A titled panel; its heading names the region for assistive technology and tests. */
function Panel({ title, id, children, action }: { title: string; id: string; children: ReactNode; action?: ReactNode }) {
  return (
    <section className="dash-panel" aria-labelledby={id} id={id.replace(/-title$/, "")}>
      <div className="dash-panel-head">
        <h2 id={id}>{title}</h2>
        {action}
      </div>
      {children}
    </section>
  );
}

/** One count that opens the list it counts; `tone` colours it by state (the label carries the meaning). */
function Stat({ label, value, href, tone }: { label: string; value: number; href: string; tone?: string }) {
  const className = `stat${tone && value > 0 ? ` stat-${tone}` : ""}`;
  return (
    <Link className={className} href={href} aria-label={`${value} ${label}`}>
      <span className="stat-value">{value.toLocaleString()}</span>
      <span className="stat-label">{label}</span>
    </Link>
  );
}

function NoCollectors() {
  return (
    <EmptyState
      title="No collectors yet"
      actions={
        <>
          <Link href="/ui/collectors" className="button primary">
            Add a collector
          </Link>
          <Link href="/ui/pipelines" className="button">
            Build a pipeline
          </Link>
        </>
      }
    >
      Add your first collector on Collectors, or many at once on <Link href="/ui/onboarding">Onboarding</Link>: pick OpenTelemetry Collector or Alloy, run the
      one-line install on the host, and it appears here as soon as it connects.
    </EmptyState>
  );
}

function FleetPanel({ collectors }: { collectors: Dashboard["collectors"] }) {
  const { byStatus, byMode } = collectors;
  return (
    <Panel title="Collectors" id="fleet-title" action={<Link href="/ui/collectors">All collectors</Link>}>
      <div className="stats">
        <Stat label="total" value={collectors.total} href="/ui/collectors" />
        <Stat label="online" value={byStatus.online} href={collectorsWhere({ status: "online" })} tone="ok" />
        <Stat label="degraded" value={byStatus.degraded} href={collectorsWhere({ status: "degraded" })} tone="warn" />
        <Stat label="offline" value={byStatus.offline} href={collectorsWhere({ status: "offline" })} tone="danger" />
        <Stat label="pending" value={byStatus.pending} href={collectorsWhere({ status: "pending" })} />
      </div>
      <div className="stats stats-small" role="group" aria-label="By mode">
        <Stat label={MODE_NAMES.opamp} value={byMode.opamp} href={collectorsWhere({ match: 'collector.mode="opamp"' })} />
        <Stat label={MODE_NAMES["rcfg-remotecfg"]} value={byMode["rcfg-remotecfg"]} href={collectorsWhere({ match: 'collector.mode="rcfg-remotecfg"' })} />
      </div>
    </Panel>
  );
}

const ROLLOUT_STATE: Record<Dashboard["rollout"]["state"], { text: string; tone: string }> = {
  idle: { text: "nothing published yet", tone: "muted" },
  running: { text: "in progress", tone: "accent" },
  paused: { text: "paused", tone: "warn" },
  aborted: { text: "aborted", tone: "danger" },
  completed: { text: "completed", tone: "ok" },
  completed_with_errors: { text: "completed with failures", tone: "danger" },
};

function RolloutPanel({ rollout }: { rollout: Dashboard["rollout"] }) {
  const state = ROLLOUT_STATE[rollout.state];
  return (
    <Panel title="Latest rollout" id="rollout-title" action={<Link href="/ui/rollouts">All rollouts</Link>}>
      {rollout.rolloutId === null ? (
        <p className="dash-empty">
          Nothing published yet. Build a pipeline on <Link href="/ui/pipelines">Pipelines</Link>, then commit and publish it on{" "}
          <Link href="/ui/changes">Changes</Link>.
        </p>
      ) : (
        <>
          <p className="rollout-line">
            <span className={`pill pill-${state.tone}`}>{rollout.staged ? `staged · ${state.text}` : state.text}</span>
            {rollout.commit && <code title={rollout.commit}>{shortCommit(rollout.commit)}</code>}
            {rollout.batches && (
              <span className="muted">
                batch {rollout.batches.released} of {rollout.batches.total}
              </span>
            )}
          </p>
          {rollout.pausedReason && <p className="dash-note">{rollout.pausedReason}</p>}
          <RolloutProgress rollout={rollout} />
          <div className="stats stats-small">
            <Stat label="current" value={rollout.counts.current} href="/ui/changes" tone="ok" />
            <Stat label="applying" value={rollout.counts.applying + rollout.counts.outdated} href="/ui/changes" />
            <Stat label="failed" value={rollout.counts.failed} href="/ui/changes" tone="danger" />
            {rollout.counts.queued > 0 && <Stat label="queued" value={rollout.counts.queued} href="/ui/changes" />}
            {rollout.counts.offline > 0 && <Stat label="offline" value={rollout.counts.offline} href={collectorsWhere({ status: "offline" })} />}
          </div>
          <Failures failures={rollout.failures} count={rollout.counts.failed} />
        </>
      )}
    </Panel>
  );
}

/** How far the rollout got: current out of those a config can reach. */
function RolloutProgress({ rollout }: { rollout: Dashboard["rollout"] }) {
  const reachable = rollout.total - rollout.counts.offline - rollout.counts.reporting_only;
  if (reachable <= 0) return null;
  return (
    <p className="rollout-progress">
      <progress max={reachable} value={rollout.counts.current} aria-label="Collectors current" />
      <span>
        {rollout.counts.current} of {reachable} current
      </span>
    </p>
  );
}

function Failures({ failures, count }: { failures: Dashboard["rollout"]["failures"]; count: number }) {
  if (failures.length === 0) return null;
  return (
    <div className="dash-list">
      <h3>Failed</h3>
      <ul>
        {failures.map((f) => (
          <li key={f.id}>
            <Link href={recordHref("collector", f.id)}>{f.name}</Link>
            {f.error && <span className="dash-error">{f.error}</span>}
          </li>
        ))}
      </ul>
      {count > failures.length && (
        <p className="hint">
          and {count - failures.length} more on <Link href="/ui/changes">Changes</Link>
        </p>
      )}
    </div>
  );
}

type Attention = Pick<Dashboard, "failed" | "offline" | "unrenderable" | "pinned" | "drifted" | "reportingOnly">;

/** One reason a collector needs attention: its count's label and tone, where the count links, and the list under it. */
interface Reason {
  id: string;
  label: string;
  tone: string;
  count: number;
  /** The collector list filtered to exactly these (GET /collectors?attention=). */
  href: string;
  title: string;
  items: { id: string; name: string; note: string | null }[];
  fix: string;
}

function reasons({ failed, offline, unrenderable, pinned, drifted, reportingOnly }: Attention): Reason[] {
  const named = <T extends { id: string; name: string }>(list: { sample: T[] }, note: (item: T) => string | null = () => null) =>
    list.sample.map((item) => ({ id: item.id, name: item.name, note: note(item) }));
  return [
    {
      id: "failed",
      label: "failed",
      tone: "danger",
      count: failed.count,
      href: collectorsWhere({ attention: "failed" }),
      title: "Failed: their config did not apply",
      items: named(failed, (f) => f.error),
      fix: "Read the error on the collector's page; fix the pipeline and publish again, or roll the collector back.",
    },
    {
      id: "offline",
      label: "offline",
      tone: "danger",
      count: offline.count,
      href: collectorsWhere({ attention: "offline" }),
      title: "Offline: nothing reaches them",
      items: named(offline),
      fix: "They get their config when they connect again.",
    },
    {
      id: "unrenderable",
      label: "cannot render",
      tone: "warn",
      count: unrenderable.count,
      href: collectorsWhere({ attention: "unrenderable" }),
      title: "Cannot render: left on the config they run",
      items: named(unrenderable, (u) => u.error),
      fix: "Give them the attribute their config needs, or change what the pipeline reads.",
    },
    {
      id: "pinned",
      label: "pinned",
      tone: "warn",
      count: pinned.count,
      href: collectorsWhere({ attention: "pinned" }),
      title: "Pinned by a rollback: fleet publishes skip them",
      items: named(pinned, (p) => `by ${p.actor}`),
      fix: "Unpin them on the collector's page once the fleet's config suits them again.",
    },
    {
      id: "drifted",
      label: "drifted",
      tone: "warn",
      count: drifted.count,
      href: collectorsWhere({ attention: "drifted" }),
      title: "Drifted: running something other than their config",
      items: named(drifted, (d) => d.reason),
      fix: "Publish again or roll back from the collector's page to put the config back.",
    },
    {
      id: "reporting-only",
      label: "reporting only",
      tone: "warn",
      count: reportingOnly.count,
      href: collectorsWhere({ attention: "reportingOnly" }),
      title: "Reporting only: cannot accept remote config",
      items: named(reportingOnly),
      fix: "Run these under the OpAMP supervisor so published configs reach them.",
    },
  ];
}

/**
 * Every collector an operator should look at, counted by why: each count
 * links to the collector list filtered to exactly those (?attention=, the
 * same judgement as the count), and "all is well" only when every count is 0.
 */
function AttentionPanel({ attention }: { attention: Attention }) {
  const all = reasons(attention);
  return (
    <Panel title="Needs attention" id="attention-title">
      <div className="stats stats-small">
        {all.map((r) => (
          <Stat key={r.id} label={r.label} value={r.count} href={r.href} tone={r.tone} />
        ))}
      </div>
      {all.every((r) => r.count === 0) && <p className="dash-empty">Every collector is connected, runs the config it was given and can take the next one.</p>}
      {all.map((r) => (
        <NamedList key={r.id} id={r.id} title={r.title} items={r.items} count={r.count} fix={r.fix} more={r.href} />
      ))}
    </Panel>
  );
}

/** A few named collectors behind a count, each opening its page, with what to do about them; `more` lists them all. */
function NamedList({
  id,
  title,
  items,
  count,
  fix,
  more,
}: {
  id: string;
  title: string;
  items: { id: string; name: string; note: string | null }[];
  count: number;
  fix: string;
  more: string;
}) {
  if (count === 0) return null;
  return (
    <div className="dash-list" id={id}>
      <h3>{title}</h3>
      <ul>
        {items.map((item) => (
          <li key={item.id}>
            <Link href={recordHref("collector", item.id)}>{item.name}</Link>
            {item.note && <span className="muted">{item.note}</span>}
          </li>
        ))}
      </ul>
      {count > items.length && (
        <p className="hint">
          <Link href={more}>and {count - items.length} more</Link>
        </p>
      )}
      <p className="hint">{fix}</p>
    </div>
  );
}

function NoRates() {
  return (
    <p className="dash-empty">
      No collector has sent its own metrics yet. Connected collectors running {RUNTIME_NAMES.otelcol} are offered the metrics endpoint and show rates within a
      minute; check a collector's page if one stays empty.
    </p>
  );
}

/**
 * Fleet-wide records/s: now, and over the last hour from the server's
 * throughput history (a line needs two buckets; until then the panel says when
 * it will appear).
 */
function FleetRatePanel({ fleetRate, reporting }: { fleetRate: Dashboard["fleetRate"]; reporting: number }) {
  const { current, history } = fleetRate;
  return (
    <Panel title="Fleet records/s" id="fleet-rate-title">
      <p className="fleet-rate">
        <span className="stat-value">{current === null ? "—" : formatRate(current)}</span>
        <span className="muted">
          {current === null
            ? reporting === 0
              ? "no collector reports its rates now"
              : "waiting for the reporting collectors' next push"
            : `received in the latest 15 s (the chart's last point), from ${fleetRate.collectors} collector${fleetRate.collectors === 1 ? "" : "s"}; ${reporting} reporting now`}
        </span>
      </p>
      {history.length >= 2 ? (
        <Suspense fallback={<p className="hint">Loading chart…</p>}>
          <Chart
            title="Fleet records per second"
            times={history.map((p) => Date.parse(p.time) / 1000)}
            series={[{ label: "records/s", values: history.map((p) => p.value) }]}
            format={formatRate}
            span={(Date.parse(history.at(-1)!.time) - Date.parse(history[0]!.time)) / 1000}
          />
        </Suspense>
      ) : (
        <p className="hint">The chart over the last hour appears once collectors have reported for half a minute.</p>
      )}
    </Panel>
  );
}

function TopPanel({ title, id, items, empty }: { title: string; id: string; items: Dashboard["throughput"]["byRecords"]; empty: ReactNode }) {
  return (
    <Panel title={title} id={id}>
      {items.length === 0 ? (
        empty
      ) : (
        <ol className="top-list">
          {items.map((item) => (
            <li key={item.id}>
              <Link href={recordHref("collector", item.id)}>{item.name}</Link>
              <span className="top-rate">{formatRate(item.rate)}</span>
            </li>
          ))}
        </ol>
      )}
    </Panel>
  );
}
