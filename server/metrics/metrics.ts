/**
 * The server's own Prometheus metrics (README "Operating", "Metrics"): what the
 * edge counts as it serves (requests, channel sessions and messages, auth
 * failures), what the store wrapper counts (operations, errors, change feed),
 * and what is computed at scrape time from the collectors view and the latest
 * rollout. The edge holds the children it increments, looked up once per route
 * and status, so a request costs a map lookup and a few additions.
 */
import { COLLECTOR_STATUSES } from "../../shared/collector-status.ts";
import { MANAGEMENT_MODES } from "../../shared/vocabulary.ts";
import type { Collector } from "../../shared/collectors.ts";
import type { RolloutStatus } from "../rollout/records.ts";
import { VERSION } from "../version.ts";
import { Counter, Gauge, Histogram, Registry, type CounterChild, type Format, type GaugeChild, type HistogramChild } from "./registry.ts";

/** Seconds: 1 ms to 10 s, the span of a poll answered from memory to a fleet's publish. */
export const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Seconds: a NOTIFY heard within a millisecond to a feed that fell half a minute behind. */
export const FEED_LAG_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** What the scrape-time gauges read; the assembly hands in the app's parts. */
export interface MetricsSources {
  /** Every collector of the in-memory view, uncopied (Collectors.each). */
  eachCollector(visit: (collector: Collector) => void): Promise<void>;
  /** Progress of the latest rollout (StagedRollouts.status). */
  rolloutStatus(): Promise<RolloutStatus>;
}

/**
 * How long a scrape waits for a scrape-time source (the collectors view before the store is open, a
 * rollout status read during an outage): past it the source's families are left out and the rest is
 * answered, well inside Prometheus' default 10 s scrape timeout.
 */
export const SOURCE_DEADLINE_MS = 3000;

const STATUS_INDEX = new Map<string, number>(COLLECTOR_STATUSES.map((status, i) => [status, i]));
const MODE_INDEX = new Map<string, number>(MANAGEMENT_MODES.map((mode, i) => [mode, i]));

/** The rollout states a scrape reports, whatever the latest rollout is. */
const ROLLOUT_STATES = ["idle", "running", "paused", "aborted", "completed", "completed_with_errors"];

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
const METHOD_INDEX = new Map(METHODS.map((method, i) => [method, i]));
const OTHER_METHOD = METHODS.length;

/**
 * One route's series, by method and status: each made at the first answer with that pair, reused after
 * (keyed by a number, so observing allocates nothing). A method outside the common ones is labelled
 * "other", so a client cannot grow the label set.
 */
export class RouteSeries {
  private readonly children = new Map<number, HistogramChild>();

  constructor(
    private readonly histogram: Histogram,
    private readonly route: string,
  ) {}

  observe(method: string, status: number, seconds: number): void {
    const m = METHOD_INDEX.get(method) ?? OTHER_METHOD;
    const key = status * 8 + m;
    let child = this.children.get(key);
    if (child === undefined) this.children.set(key, (child = this.histogram.labels(this.route, METHODS[m] ?? "other", String(status))));
    child.observe(seconds);
  }
}

/** A channel's counters, looked up once per channel. */
export interface ChannelSeries {
  sessions: GaugeChild;
  messages: CounterChild;
  requests: CounterChild;
}

export class ServerMetrics {
  readonly registry = new Registry();
  readonly httpDuration = this.registry.register(
    new Histogram(
      "svc_http_request_duration_seconds",
      "Time to answer an HTTP request, by route (the path template), method and status. WebSocket upgrades are not counted here.",
      ["route", "method", "status"],
      DURATION_BUCKETS,
    ),
  );
  readonly collectors = this.registry.register(new Gauge("svc_collectors", "Collectors by status and management mode.", ["status", "mode"]));
  readonly rolloutCollectors = this.registry.register(
    new Gauge("svc_rollout_collectors", "Collectors of the latest rollout by their state in it (failed: the rollout's failures).", ["state"]),
  );
  readonly rolloutState = this.registry.register(new Gauge("svc_rollout_state", "1 for the latest rollout's state, 0 for the others.", ["state"]));
  readonly channelSessions = this.registry.register(new Gauge("svc_channel_sessions", "WebSocket sessions open, by channel.", ["channel"]));
  readonly channelMessages = this.registry.register(new Counter("svc_channel_messages_total", "WebSocket messages received, by channel.", ["channel"]));
  readonly channelRequests = this.registry.register(
    new Counter("svc_channel_requests_total", 'HTTP requests answered by a channel (channel="remotecfg": remote-config polls), by channel.', ["channel"]),
  );
  readonly storeOperations = this.registry.register(new Counter("svc_store_operations_total", "Store calls, by operation.", ["op"]));
  readonly storeErrors = this.registry.register(new Counter("svc_store_errors_total", "Store calls that failed, by operation.", ["op"]));
  readonly storeChanges = this.registry.register(
    new Counter("svc_store_changes_total", "Documents announced on the store's change feed (every replica's writes on an external store).", []),
  );
  readonly feedLag = this.registry.register(
    new Histogram(
      "svc_change_feed_lag_seconds",
      "Time from a write's commit on the replica that made it (its clock) to this replica's watchers hearing it on the change feed, per announced write, this replica's own included.",
      [],
      FEED_LAG_BUCKETS,
    ),
  );
  readonly storeResyncs = this.registry.register(
    new Counter("svc_store_feed_resyncs_total", "Times the external store's change feed reconnected and the caches read everything again.", []),
  );
  readonly authFailures = this.registry.register(
    new Counter("svc_auth_failures_total", "Answers 401, by the kind of credential sent (none, session, serviceAccount, collector, enrollment, ...).", [
      "credential",
    ]),
  );
  readonly enrollmentFailures = this.registry.register(
    new Counter("svc_enrollment_failures_total", "Requests carrying an enrollment token answered 4xx (refused, expired, exhausted or rate-limited).", []),
  );
  readonly sourceErrors = this.registry.register(
    new Counter(
      "svc_metrics_source_errors_total",
      "Scrapes that left out a source's families because it failed or took longer than 3 s (collectors: the collectors view; rollout: the latest rollout's status).",
      ["source"],
    ),
  );
  readonly buildInfo = this.registry.register(new Gauge("svc_build_info", "Always 1; the server's version in a label.", ["version"]));
  readonly startTime = this.registry.register(new Gauge("process_start_time_seconds", "When the server process started, in Unix seconds.", []));

  private readonly routes = new Map<string, RouteSeries>();
  private readonly channels = new Map<string, ChannelSeries>();
  private readonly authByKind = new Map<string, CounterChild>();
  private readonly enrollmentFailedChild = this.enrollmentFailures.labels();
  private rolloutInFlight: Promise<RolloutStatus> | undefined;

  constructor(sources?: MetricsSources) {
    this.buildInfo.labels(VERSION).set(1);
    this.startTime.labels().set(Math.floor(Date.now() / 1000 - process.uptime()));
    this.storeChanges.labels();
    this.storeResyncs.labels();
    this.feedLag.labels();
    this.sourceErrors.labels("collectors");
    this.sourceErrors.labels("rollout");
    if (sources) this.registry.onCollect(() => this.collect(sources));
  }

  /** The series of a route label: an API route's path template, a probe, a channel's path, "ui", "unmatched". Look it up once and keep it. */
  route(label: string): RouteSeries {
    let series = this.routes.get(label);
    if (series === undefined) this.routes.set(label, (series = new RouteSeries(this.httpDuration, label)));
    return series;
  }

  channel(name: string): ChannelSeries {
    let series = this.channels.get(name);
    if (series === undefined) {
      series = { sessions: this.channelSessions.labels(name), messages: this.channelMessages.labels(name), requests: this.channelRequests.labels(name) };
      this.channels.set(name, series);
    }
    return series;
  }

  /** A 401 answer; `kind` from credentialKind (a bounded set). */
  authFailed(kind: string): void {
    let child = this.authByKind.get(kind);
    if (child === undefined) this.authByKind.set(kind, (child = this.authFailures.labels(kind)));
    child.inc();
  }

  enrollmentFailed(): void {
    this.enrollmentFailedChild.inc();
  }

  expose(format: Format): Promise<string> {
    return this.registry.expose(format);
  }

  private async collect(sources: MetricsSources): Promise<void> {
    await Promise.all([
      this.bounded("collectors", [this.collectors], () => this.collectCollectors(sources)),
      this.bounded("rollout", [this.rolloutCollectors, this.rolloutState], () => this.collectRollout(sources)),
    ]);
  }

  /** Runs one source under the deadline; when it fails or is late its families are emptied and the failure counted. */
  private async bounded(source: string, families: Gauge[], collect: () => Promise<void>): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), SOURCE_DEADLINE_MS)));
    try {
      if ((await Promise.race([collect(), late])) === "late") throw new Error("late");
    } catch {
      for (const family of families) family.reset();
      this.sourceErrors.labels(source).inc();
    } finally {
      clearTimeout(timer);
    }
  }

  /** One pass over the view, counting into a status × mode array: no allocation per collector. */
  private async collectCollectors(sources: MetricsSources): Promise<void> {
    const counts = new Array<number>(STATUS_INDEX.size * MODE_INDEX.size).fill(0);
    const others = new Map<string, number>();
    await sources.eachCollector((collector) => {
      const s = STATUS_INDEX.get(collector.status);
      const m = MODE_INDEX.get(collector.managementMode);
      if (s !== undefined && m !== undefined) counts[s * MODE_INDEX.size + m]!++;
      else others.set(`${collector.status}\u0000${collector.managementMode}`, (others.get(`${collector.status}\u0000${collector.managementMode}`) ?? 0) + 1);
    });
    this.collectors.reset();
    for (const [status, s] of STATUS_INDEX) for (const [mode, m] of MODE_INDEX) this.collectors.labels(status, mode).set(counts[s * MODE_INDEX.size + m]!);
    for (const [key, count] of others) this.collectors.labels(...(key.split("\u0000") as [string, string])).set(count);
  }

  private async collectRollout(sources: MetricsSources): Promise<void> {
    // One status read at a time, shared by scrapes that arrive while it runs.
    const inFlight = (this.rolloutInFlight ??= sources.rolloutStatus().finally(() => (this.rolloutInFlight = undefined)));
    const status = await inFlight;
    this.rolloutCollectors.reset();
    for (const [state, count] of Object.entries(status.counts)) this.rolloutCollectors.labels(state).set(count);
    for (const state of ROLLOUT_STATES) this.rolloutState.labels(state).set(status.state === state ? 1 : 0);
  }
}
