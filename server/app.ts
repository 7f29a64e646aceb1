/**
 * The assembly: the running server's parts, wired once, and their one
 * lifecycle. `server/main.ts` and `test/harness.ts` both build the server
 * here, so what runs in tests is what runs in production. Domain services
 * hold the store; the edge holds the services, each module only the ones it
 * declares it uses.
 */
import { dirname, join } from "node:path";
import type { Logger } from "pino";
import { apiRoutes } from "./api/index.ts";
import { storageStatus } from "./api/system.ts";
import { AgentChannel, HEARTBEAT_SECONDS } from "./agents/channel.ts";
import { Agents } from "./agents/registry.ts";
import { startAuditRetention } from "./audit/retention.ts";
import { AuthFailureBursts } from "./auth/failure-bursts.ts";
import { LiveCredentials } from "./auth/live.ts";
import { ServiceAccounts } from "./auth/service-accounts.ts";
import { Sessions } from "./auth/sessions.ts";
import { Users } from "./auth/users.ts";
import { Collectors } from "./collectors/collectors.ts";
import { Presence } from "./collectors/presence.ts";
import { CollectorTokens } from "./collectors/tokens.ts";
import { BootstrapChannel } from "./enrollment/bootstrap-channel.ts";
import { DownloadsChannel } from "./enrollment/downloads.ts";
import { EventHub } from "./events/events.ts";
import type { Channel } from "./channel/channel.ts";
import { startHttpServer, type HttpServer } from "./http/server.ts";
import type { ServerConfig } from "./config/load.ts";
import { Activations } from "./configstore/activations.ts";
import { HostPaths } from "./catalog/hostpaths.ts";
import { Components } from "./configstore/components.ts";
import { ConfigStore } from "./configstore/configstore.ts";
import { collectorNamesFrom } from "./configstore/names.ts";
import { Pipelines } from "./configstore/pipelines.ts";
import { ConfigRepo } from "./configstore/repo.ts";
import { Routes } from "./configstore/routes.ts";
import { Refs } from "./refs/refs.ts";
import { Enrollment } from "./enrollment/enrollment.ts";
import { smtpMailer, type Mailer } from "./mail/mailer.ts";
import { OpampChannel } from "./opamp/channel.ts";
import { remoteConfigChannel } from "./remotecfg/remotecfg.ts";
import { Retargeting } from "./rollout/retarget.ts";
import { AttributeRollouts } from "./rollout/attribute-rollout.ts";
import { Restarts } from "./collectors/restarts.ts";
import { Builds } from "./collectors/builds.ts";
import { Rollouts } from "./rollout/rollout.ts";
import { TargetDelivery } from "./rollout/target-delivery.ts";
import { TargetHistory } from "./rollout/history.ts";
import { Attention } from "./rollout/attention.ts";
import { TargetIndex } from "./rollout/target-index.ts";
import { LatestFleetRollout } from "./rollout/latest-fleet.ts";
import { Stager } from "./rollout/stager.ts";
import { StagedRollouts } from "./rollout/staged.ts";
import { RolloutEnds } from "./rollout/ends.ts";
import { keySource, loadSecrets } from "./secrets/key.ts";
import type { Secrets } from "./secrets/secrets.ts";
import { upgradeSecrets } from "./rollout/secrets-upgrade.ts";
import { SecretVault } from "./secrets/vault.ts";
import { MetricsChannel } from "./telemetry/channel.ts";
import { Telemetry } from "./telemetry/index.ts";
import { startMetricsListener } from "./metrics/exposition.ts";
import { ServerMetrics } from "./metrics/metrics.ts";
import { CountedStore } from "./metrics/store.ts";
import type { Store } from "./store/store.ts";
import { WebhookSender } from "./webhooks/deliver.ts";
import { WebhookEvents } from "./webhooks/events.ts";
import { WebhookSweep } from "./webhooks/sweep.ts";
import { StallDetector } from "./telemetry/stall.ts";
import { Webhooks } from "./webhooks/webhooks.ts";

/**
 * A part with background work. The assembly lists them once, starts them in
 * list order and stops them in reverse, so nothing outlives what it uses.
 */
interface Service {
  start?(): void;
  stop?(): void | Promise<void>;
}

async function stopInReverse(services: readonly Service[]): Promise<void> {
  for (const service of services.toReversed()) await service.stop?.();
}

export interface App {
  config: ServerConfig;
  store: Store;
  logger: Logger;
  startedAt: Date;
  accounts: ServiceAccounts;
  /** Web UI users and their sessions. */
  users: Users;
  /** Sends invite and reset links when smtp.host is set; null: links are shown to the admin instead. */
  mailer: Mailer | null;
  collectors: Collectors;
  enrollment: Enrollment;
  /** Each collector's control token (`svcct_`). */
  collectorTokens: CollectorTokens;
  /** Each collector's own-metrics credential (`svccm_`): /v1/metrics only (collectors/tokens.ts). */
  metricsTokens: CollectorTokens;
  /** Seals and opens secrets kept in the store (server/secrets). */
  secrets: Secrets;
  /** Sealed values of sensitive config fields, one document per version. */
  vault: SecretVault;
  configStore: ConfigStore;
  sources: Components;
  destinations: Components;
  activations: Activations;
  pipelines: Pipelines;
  routes: Routes;
  /** Collectors, sources, destinations and pipelines by what a person types: id or name (refs/refs.ts). */
  refs: Refs;
  /** Publishes and their plans (rollout/rollout.ts). */
  rollouts: Rollouts;
  /** What the collector channels ask of the rollout (rollout/delivery.ts), and the effective configs collectors reported. */
  delivery: TargetDelivery;
  /** Each collector's config history: rollback, unpin, retry (rollout/history.ts). */
  targetHistory: TargetHistory;
  /** The collectors whose config needs a look (rollout/attention.ts). */
  attention: Attention;
  staged: StagedRollouts;
  /** The dashboard's latest fleet rollout, its counts kept current (rollout/latest-fleet.ts). */
  fleetRollout: LatestFleetRollout;
  /** Renders a collector again when a write here changes its attributes (rollout/retarget.ts). */
  retargeting: Retargeting;
  /** Plans and deploys operators' edits of who runs what (rollout/attribute-rollout.ts). */
  attributeRollouts: AttributeRollouts;
  /** Operators' restart requests, sent to collectors as the OpAMP restart command. */
  restarts: Restarts;
  /** The component types each collector's build reports (OpAMP available components). */
  builds: Builds;
  presence: Presence;
  /** Own-metrics intake state: per-collector throughput, in memory. */
  telemetry: Telemetry;
  events: EventHub;
  /** Connections that outlive their request (OpAMP and agent sessions, event streams), ended when their credential is. */
  live: LiveCredentials;
  /** Host agents: the registry, and the `/v1/agent` channel the REST API relays browse calls through. */
  agents: Agents;
  agentChannel: AgentChannel;
  /** The collector and agent channels the edge serves beside the API. */
  channels: Channel[];
  /** Counts 401 answers and audits them in bursts. */
  authFailures: AuthFailureBursts;
  /** The server's own Prometheus metrics, exposed at GET /metrics (server/metrics/). */
  metrics: ServerMetrics;
  /** Event subscriptions and their persisted delivery queue (server/webhooks/). */
  webhooks: Webhooks;
  /**
   * Serves the REST API, the channels, the UI and the probes; throws when the
   * address cannot be bound. The store need not be open yet: /readyz says so.
   * The answer's stop() ends the channels' sessions and the event streams,
   * drains requests and audits the auth failures counted so far.
   */
  listen(): HttpServer;
  /** Once the store is open: plaintext an older server left moves to the vault, then the background services start. */
  start(): Promise<void>;
  /** Stops the edge (when listening), then the services in reverse order, once; the store is closed by its owner. */
  stop(): Promise<void>;
}

/**
 * The server's secrets key, as the configuration names it (main.ts loads it first, to fail before
 * opening the store); `created` hears of an embedded key file made at this start.
 */
export function secretsFor(config: ServerConfig, logger: Logger, created?: (path: string) => void): Secrets {
  return loadSecrets(keySource(config), logger, created);
}

/** The embedded config repository sits beside the state file (docs/architecture.md "The store"). */
export function gitDirFor(config: ServerConfig): string {
  return join(dirname(config.storage.boltPath), "config.git");
}

/**
 * The configuration store: its git history beside the state file (embedded), or in the external store,
 * which keeps it itself so every replica serves it (docs/architecture.md "High availability").
 */
export async function openConfigStore(store: Store, gitdir: string): Promise<ConfigStore> {
  const repo = store.backend === "embedded" ? await ConfigRepo.open(gitdir) : ConfigRepo.inStore(store);
  return new ConfigStore(store, repo);
}

export async function createApp(
  config: ServerConfig,
  givenStore: Store,
  logger: Logger,
  gitdir = gitDirFor(config),
  secrets = secretsFor(config, logger),
): Promise<App> {
  // Every part uses the store through the counting wrapper: svc_store_operations_total and friends (server/metrics/store.ts).
  // The scrape-time sources are set below, once the collectors and rollouts exist.
  let metricsSources: { collectors: Collectors; staged: StagedRollouts } | undefined;
  const metrics = new ServerMetrics({
    eachCollector: (visit) => metricsSources!.collectors.each(visit),
    rolloutStatus: () => metricsSources!.staged.status(),
  });
  const store: Store = new CountedStore(givenStore, metrics);
  const collectors = new Collectors(store, config.fleet.trustedAttributes);
  const collectorTokens = new CollectorTokens(store, collectors, secrets);
  const metricsTokens = new CollectorTokens(store, collectors, secrets, "metrics");
  const configStore = await openConfigStore(store, gitdir);
  const hostPaths = new HostPaths(config.sources.hostPaths);
  const vault = new SecretVault(store, secrets);
  const rollouts = new Rollouts(store, configStore, collectors, logger);
  const delivery = new TargetDelivery(store, collectors, vault, logger);
  const targetHistory = new TargetHistory(store, collectors);
  const targetIndex = new TargetIndex(store);
  const staged = new StagedRollouts(store, collectors, targetHistory, targetIndex);
  const fleetRollout = new LatestFleetRollout(store, collectors, targetIndex);
  const retargeting = new Retargeting(store, configStore, collectors, logger);
  const attributeRollouts = new AttributeRollouts(store, retargeting, (hash) => targetHistory.storedRendered(hash));
  const presence = new Presence(store, collectors, logger);
  const enrollment = new Enrollment(store, collectors);
  const agents = new Agents(store, enrollment, logger, HEARTBEAT_SECONDS);
  const live = new LiveCredentials(store, logger);
  const events = new EventHub(store, logger);
  const users = new Users(store, new Sessions(store), { loginFailures: config.rateLimit.loginFailures });
  const webhooks = new Webhooks(store, secrets, Date.now, config.webhooks.allowPrivateTargets);
  const telemetry = new Telemetry();
  metricsSources = { collectors, staged };
  const channels: Channel[] = [];
  let stopRetention: (() => Promise<void>) | undefined;
  // Background work, in start order; listen() adds the edge, which stops first.
  const services: Service[] = [
    { stop: () => live.close() },
    { stop: () => configStore.close() },
    { stop: () => collectorTokens.close() },
    { stop: () => metricsTokens.close() },
    { stop: () => collectors.close() },
    { stop: () => delivery.close() },
    { stop: () => fleetRollout.close() },
    { stop: () => targetIndex.close() },
    // Before the rollouts and the registry it reads: the batch in flight finishes first.
    { stop: () => retargeting.close() },
    presence,
    // Publishes whose writes stopped part way (a crash) are recorded as interrupted: at start, then every few seconds.
    rollouts.writes,
    new Stager(staged, delivery, logger),
    new RolloutEnds(store, staged, logger),
    { stop: () => agents.close() },
    // Events from the change feed and from time passing (stalled, expiring) into the queue, and the queue out to the receivers.
    new WebhookEvents(store, webhooks, logger, { offlineMinutes: config.webhooks.offlineMinutes }),
    new WebhookSweep(
      webhooks,
      {
        stalls: new StallDetector(telemetry.window, config.webhooks.stalledMinutes * 60_000),
        eachCollector: (visit) => collectors.each(visit),
        expiring: (now, withinMs, announce) => enrollment.expiring(now, withinMs, announce),
        tokenExpiringHours: config.webhooks.tokenExpiringHours,
      },
      logger,
    ),
    new WebhookSender(store, webhooks, logger),
    {
      start: () => {
        stopRetention = startAuditRetention(store, {
          retentionDays: config.storage.auditLogRetentionDays,
          logger,
          jobs: [
            { name: "enrollment tokens", run: (now) => enrollment.prune(now) },
            { name: "UI sessions", run: (now) => users.sessions.prune(now) },
            { name: "invite and reset links", run: (now) => users.pruneLinks(now) },
          ],
        });
      },
      stop: () => stopRetention?.(),
    },
  ];
  let edge: Service[] = [];
  let edgeStopped: Promise<void> | undefined;
  let stopped: Promise<void> | undefined;
  const stopEdge = () => (edgeStopped ??= stopInReverse(edge));
  const app: App = {
    config,
    store,
    logger,
    startedAt: new Date(),
    accounts: new ServiceAccounts(store),
    users,
    mailer: config.smtp ? smtpMailer(config.smtp) : null,
    collectors,
    enrollment,
    collectorTokens,
    metricsTokens,
    secrets,
    vault,
    configStore,
    sources: new Components(configStore, "source", vault, hostPaths, collectorNamesFrom(collectors)),
    destinations: new Components(configStore, "destination", vault, hostPaths, collectorNamesFrom(collectors)),
    activations: new Activations(configStore, collectors, vault, hostPaths),
    pipelines: new Pipelines(configStore, collectors),
    routes: new Routes(configStore, collectors),
    refs: new Refs(collectors, configStore),
    rollouts,
    delivery,
    targetHistory,
    attention: new Attention(targetIndex, collectors),
    staged,
    fleetRollout,
    retargeting,
    attributeRollouts,
    restarts: new Restarts(store, collectors),
    builds: new Builds(store),
    presence,
    events,
    live,
    telemetry,
    agents,
    agentChannel: new AgentChannel(agents, live, logger),
    channels,
    authFailures: new AuthFailureBursts(store, logger),
    metrics,
    webhooks,
    listen() {
      const http = startHttpServer(app, apiRoutes(app), () => storageStatus(app));
      // metrics.listen: GET /metrics without credentials on its own address; throws like listen when it cannot bind.
      let metricsListener: ReturnType<typeof startMetricsListener> | undefined;
      try {
        if (config.metrics.listen) metricsListener = startMetricsListener(config.metrics.listen, metrics, logger);
      } catch (error) {
        void http.stop();
        throw error;
      }
      edge = [
        { stop: () => metricsListener?.stop() },
        app.authFailures,
        http,
        // Sessions and streams end before the server stops: they would hold a graceful stop forever.
        { stop: () => events.close() },
        // Started once listening succeeded, in the same tick, so before any request reaches them.
        {
          start: () => channels.forEach((channel) => channel.start?.()),
          stop: async () => void (await Promise.all(channels.map((channel) => channel.stop?.()))),
        },
      ];
      for (const service of edge) service.start?.();
      return { ...http, stop: stopEdge };
    },
    async start() {
      // Plaintext an older server left in the working tree moves to the vault; collectors are delivered the same bytes.
      await upgradeSecrets(app).catch((error) => logger.error({ err: error }, "moving plaintext secrets to the vault failed; the next start tries again"));
      for (const service of services) service.start?.();
    },
    stop() {
      return (stopped ??= stopEdge().then(() => stopInReverse(services)));
    },
  };
  // The collector and agent channels the edge serves beside the REST API (docs/architecture.md "Channels"), and what install.sh fetches.
  channels.push(
    new OpampChannel(app),
    remoteConfigChannel(app),
    new MetricsChannel(app, app.telemetry.window),
    app.agentChannel,
    new BootstrapChannel({ enrollment, collectorTokens, externalUrl: () => config.externalUrl }),
    new DownloadsChannel(config.downloads.dir),
  );
  return app;
}
