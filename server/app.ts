/**
 * The running server's parts, wired once at start and handed to the edge.
 * Domain services hold the store; the edge holds the services.
 */
import type { Logger } from "pino";
import pkg from "../package.json" with { type: "json" };
import { ServiceAccounts } from "./auth/service-accounts.ts";
import { Collectors } from "./collectors/collectors.ts";
import type { ServerConfig } from "./config/load.ts";
import type { Store } from "./store/store.ts";

export const VERSION: string = pkg.version;

export interface App {
  config: ServerConfig;
  store: Store;
  logger: Logger;
  startedAt: Date;
  accounts: ServiceAccounts;
  collectors: Collectors;
}

export function createApp(config: ServerConfig, store: Store, logger: Logger): App {
  return {
    config,
    store,
    logger,
    startedAt: new Date(),
    accounts: new ServiceAccounts(store),
    collectors: new Collectors(store),
  };
}
