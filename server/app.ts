/**
 * The running server's parts, wired once at start and handed to the edge.
 * Domain services hold the store; the edge holds the services.
 */
import { dirname, join } from "node:path";
import type { Logger } from "pino";
import pkg from "../package.json" with { type: "json" };
import { AgentChannel, HEARTBEAT_SECONDS } from "./agents/channel.ts";
import { Agents } from "./agents/registry.ts";
import { LiveCredentials } from "./auth/live.ts";
import { ServiceAccounts } from "./auth/service-accounts.ts";
import { Sessions } from "./auth/sessions.ts";
import { Users } from "./auth/users.ts";
import { Collectors } from "./collectors/collectors.ts";
import { Presence } from "./collectors/presence.ts";
import { CollectorTokens } from "./collectors/tokens.ts";
import { collectorChannels } from "./channels.ts";
import { EventHub } from "./events/events.ts";
import type { Channel } from "./channel/channel.ts";
import type { ServerConfig } from "./config/load.ts";
import { Activations } from "./configstore/activations.ts";
import { HostPaths } from "./catalog/hostpaths.ts";
import { Components } from "./configstore/components.ts";
import { ConfigStore } from "./configstore/configstore.ts";
import { Pipelines } from "./configstore/pipelines.ts";
import { ConfigRepo } from "./configstore/repo.ts";
import { Routes } from "./configstore/routes.ts";
import { Enrollment } from "./enrollment/enrollment.ts";
import { smtpMailer, type Mailer } from "./mail/mailer.ts";
import { Rollouts } from "./rollout/rollout.ts";
import { keySource, loadSecrets } from "./secrets/key.ts";
import type { Secrets } from "./secrets/secrets.ts";
import { SecretVault } from "./secrets/vault.ts";
import { Telemetry } from "./telemetry/index.ts";
import type { Store } from "./store/store.ts";

export const VERSION: string = pkg.version;

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
  collectorTokens: CollectorTokens;
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
  rollouts: Rollouts;
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
  /** Stops background work and flushes coalesced writes; the store is closed by its owner. */
  close(): Promise<void>;
}

/** The server's secrets key, as the configuration names it (main.ts loads it first, to fail before opening the store). */
export function secretsFor(config: ServerConfig, logger: Logger): Secrets {
  return loadSecrets(keySource(config), logger);
}

/** The embedded config repository sits beside the state file (docs/architecture.md "The store"). */
export function gitDirFor(config: ServerConfig): string {
  return join(dirname(config.storage.boltPath), "config.git");
}

export async function createApp(
  config: ServerConfig,
  store: Store,
  logger: Logger,
  gitdir = gitDirFor(config),
  secrets = secretsFor(config, logger),
): Promise<App> {
  const collectors = new Collectors(store);
  const collectorTokens = new CollectorTokens(store, collectors, secrets);
  // External stores keep the history themselves, so every replica serves it (docs/architecture.md "High availability").
  const repo = store.backend === "embedded" ? await ConfigRepo.open(gitdir) : ConfigRepo.inStore(store);
  const configStore = new ConfigStore(store, repo);
  const hostPaths = new HostPaths(config.sources.hostPaths);
  const vault = new SecretVault(store, secrets);
  const rollouts = new Rollouts(store, configStore, collectors, vault, logger);
  const presence = new Presence(store, collectors, logger);
  const enrollment = new Enrollment(store, collectors);
  const agents = new Agents(store, enrollment, logger, HEARTBEAT_SECONDS);
  const live = new LiveCredentials(store, logger);
  const app: App = {
    config,
    store,
    logger,
    startedAt: new Date(),
    accounts: new ServiceAccounts(store),
    users: new Users(store, new Sessions(store), { loginFailures: config.rateLimit.loginFailures }),
    mailer: config.smtp ? smtpMailer(config.smtp) : null,
    collectors,
    enrollment,
    collectorTokens,
    secrets,
    vault,
    configStore,
    sources: new Components(configStore, "source", vault, hostPaths),
    destinations: new Components(configStore, "destination", vault),
    activations: new Activations(configStore, collectors, vault, hostPaths),
    pipelines: new Pipelines(configStore, collectors),
    routes: new Routes(configStore, collectors),
    rollouts,
    presence,
    events: new EventHub(store, logger),
    live,
    telemetry: new Telemetry(),
    agents,
    agentChannel: new AgentChannel(agents, live, logger),
    channels: [],
    async close() {
      app.events.close();
      await agents.close();
      await presence.stop();
      await rollouts.close();
      collectors.close();
      collectorTokens.close();
      configStore.close();
      live.close();
    },
  };
  app.channels.push(...collectorChannels(app));
  return app;
}
