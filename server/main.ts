/**
 * svc-server: load configuration → open the store → listen → create the
 * first admin on a fresh store → serve. SIGTERM and SIGINT drain in-flight
 * requests and close the store cleanly; acknowledged writes are already
 * durable, so even kill -9 loses nothing that was answered.
 */
import { Command } from "commander";
import pino from "pino";
import { apiRoutes } from "./api/index.ts";
import { createApp, VERSION } from "./app.ts";
import { startAuditRetention } from "./audit/retention.ts";
import { redactUri } from "./config/database-uri.ts";
import { ConfigError, loadConfig, type ServerConfig } from "./config/load.ts";
import { startHttpServer } from "./http/server.ts";
import { PostgresStore } from "./store/postgres.ts";
import { SqliteStore } from "./store/sqlite.ts";
import type { Store } from "./store/store.ts";

/** The quick-start keeps its state in the working directory, so it runs without root. */
const QUICKSTART_DEFAULTS = { "storage.boltPath": ".data/state.db", "downloads.dir": "dist/packages" } as const;

function fail(message: string, code = 2): never {
  process.stderr.write(`svc-server: ${message}\n`);
  process.exit(code);
}

/**
 * embedded → SQLite at storage.boltPath; external → the adapter the database
 * URI names: postgres:// or postgresql:// opens PostgreSQL. Logs the backend,
 * never the password.
 */
async function openStore(config: ServerConfig, logger: pino.Logger): Promise<Store> {
  if (config.storage.backend === "external") {
    const uri = config.database.uri;
    const shown = redactUri(uri);
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(uri)?.[1]?.toLowerCase() ?? "";
    if (scheme === "mongodb" || scheme === "mongodb+srv") {
      fail(
        `database.uri ${shown}: MongoDB is not available in this version; storage.backend 'external' needs a PostgreSQL URI (postgres:// or postgresql://).`,
      );
    }
    if (scheme !== "postgres" && scheme !== "postgresql") {
      fail(`database.uri ${shown}: storage.backend 'external' needs a PostgreSQL URI (postgres:// or postgresql://).`);
    }
    try {
      const store = await PostgresStore.open(uri, { database: config.database.database });
      logger.info({ backend: store.backend, database: shown }, "opened the external store");
      return store;
    } catch (error) {
      fail(`cannot open the PostgreSQL store at ${shown} (database.*): ${redactUri((error as Error).message)}`, 1);
    }
  }
  try {
    const store = new SqliteStore(config.storage.boltPath);
    logger.info({ backend: store.backend, path: config.storage.boltPath }, "opened the embedded store");
    return store;
  } catch (error) {
    fail(`cannot open the embedded store at ${config.storage.boltPath} (storage.boltPath): ${(error as Error).message}`, 1);
  }
}

function banner(url: URL, adminToken: string | null, uiPassword: string | null): string {
  const lines = [`svc ${VERSION} is serving at ${url.origin}`];
  if (adminToken !== null) {
    lines.push(
      "",
      "First admin credential (shown this once; keep it somewhere safe):",
      `  ${adminToken}`,
      "",
      "Try it:",
      `  curl -H "Authorization: Bearer ${adminToken}" ${url.origin}/api/v1/system/health`,
    );
  }
  if (uiPassword !== null) {
    if (adminToken === null) lines.push("", "First web UI admin (shown this once; keep it somewhere safe):");
    lines.push("", `UI login: admin / ${uiPassword}`);
  }
  return lines.join("\n") + "\n";
}

async function run(options: { config?: string; quickstart?: boolean }): Promise<void> {
  let config: ServerConfig;
  try {
    config = loadConfig({ path: options.config, defaults: options.quickstart ? QUICKSTART_DEFAULTS : undefined });
  } catch (error) {
    if (error instanceof ConfigError) fail(`invalid configuration:\n  ${error.message.replaceAll("\n", "\n  ")}`);
    throw error;
  }
  const logger = pino({ level: config.logging.level, base: { service: "svc-server" }, timestamp: pino.stdTimeFunctions.isoTime });
  const store = await openStore(config, logger);
  let app;
  try {
    app = await createApp(config, store, logger);
  } catch (error) {
    await store.close();
    fail(`cannot open the config repository beside ${config.storage.boltPath}: ${(error as Error).message}`, 1);
  }
  app.presence.start();
  const stopRetention = startAuditRetention(store, {
    retentionDays: config.storage.auditLogRetentionDays,
    logger,
    jobs: [
      { name: "enrollment tokens", run: (now) => app.enrollment.prune(now) },
      { name: "UI sessions", run: (now) => app.users.sessions.prune(now) },
      { name: "invite and reset links", run: (now) => app.users.pruneLinks(now) },
    ],
  });
  let http;
  try {
    http = startHttpServer(app, apiRoutes(app));
  } catch (error) {
    await store.close();
    fail(`cannot listen on ${config.listen.host}:${config.listen.port} (listen): ${(error as Error).message}`, 1);
  }
  // Handlers before the banner: whoever reads the banner may stop the server at once.
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down: draining requests");
    const force = setTimeout(() => process.exit(1), 10_000);
    stopRetention();
    await http.stop();
    await app.close();
    await store.close();
    clearTimeout(force);
    logger.info("stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
  // Only once listening: a first start that cannot listen must not create the
  // admin account, or its credential would never be shown (the next start shows none).
  const adminToken = await app.accounts.bootstrapAdmin(config.bootstrap.adminToken);
  if (adminToken !== null && config.bootstrap.adminToken !== "") {
    logger.info("created the admin service account with bootstrap.adminToken");
  }
  // The web UI's first admin: the password is printed once and stored only hashed.
  const uiPassword = await app.users.bootstrapAdmin();
  logger.info({ url: http.url.origin, store: store.backend, configFile: config.file }, "svc-server ready");
  process.stdout.write(banner(http.url, adminToken === null || config.bootstrap.adminToken !== "" ? null : adminToken, uiPassword));
}

new Command("svc-server")
  .description("svc control plane: REST API, collector channels and web UI")
  .version(VERSION)
  .option("-c, --config <path>", "configuration file (default /etc/svc/config.yaml when it exists)")
  .option("--quickstart", "keep state in ./.data unless storage.boltPath is set (the README quick-start)")
  .action(run)
  .parseAsync()
  .catch((error: unknown) => fail(`failed to start: ${(error as Error).stack ?? String(error)}`, 1));
