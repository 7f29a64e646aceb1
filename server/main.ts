/**
 * svc-server: load configuration → open the store → listen → create the
 * first admin on a fresh store → serve. An external database that cannot be
 * reached yet does not stop the start: the server listens, answers /healthz,
 * reports storage down (/readyz 503, API 503 + Retry-After) and keeps trying
 * to connect; once connected it finishes starting. SIGTERM and SIGINT drain in-flight
 * requests and close the store cleanly; acknowledged writes are already
 * durable, so even kill -9 loses nothing that was answered.
 */
import { Command } from "commander";
import { existsSync, renameSync, rmSync, unlinkSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { userInfo } from "node:os";
import pino from "pino";
import { type App, createApp, gitDirFor, openConfigStore, secretsFor } from "./app.ts";
import { randomPassword } from "./auth/users.ts";
import { redactUri } from "./config/database-uri.ts";
import type { ConfigKey } from "./config/keys.ts";
import { listenFallbackUrl } from "./config/external-url.ts";
import { ConfigError, loadConfig, type ServerConfig } from "./config/load.ts";
import type { Actor } from "./audit/audit.ts";
import { dropKeptRef, PlaintextInWorktreeError, purgeSecrets } from "./configstore/purge.ts";
import { ConfigRepo } from "./configstore/repo.ts";
import { migrate } from "./migrate.ts";
import { createPrivateFile, syncDir } from "./lib/private-file.ts";
import { defaultKeyFile, keySource } from "./secrets/key.ts";
import type { Secrets } from "./secrets/secrets.ts";
import { finishRotation, planRotation, resealAll } from "./secrets/rotate.ts";
import { sealedKeys } from "./secrets/sealed-keys.ts";
import { SecretVault } from "./secrets/vault.ts";
import { type ExternalAdapter, externalAdapter } from "./store/factory.ts";
import { SqliteStore } from "./store/sqlite.ts";
import { lockState, StateLockedError } from "./store/state-lock.ts";
import type { Store } from "./store/store.ts";
import { VERSION } from "./version.ts";

/** The quick-start keeps its state in the working directory, so it runs without root. */
const QUICKSTART_DEFAULTS = { "storage.boltPath": ".data/state.db", "downloads.dir": "dist/packages" } as const;

function fail(message: string, code = 2): never {
  process.stderr.write(`svc-server: ${message}\n`);
  process.exit(code);
}

/** The external database's URI and the adapter its scheme names, refused plainly when it names none. */
function externalDatabase(config: ServerConfig): { adapter: ExternalAdapter; uri: string } {
  const uri = config.database.uri;
  const adapter = externalAdapter(uri);
  if (adapter) return { adapter, uri };
  fail(
    `database.uri ${redactUri(uri)}: storage.backend 'external' needs a PostgreSQL (postgres://, postgresql://) or MongoDB (mongodb://, mongodb+srv://) URI.`,
  );
}

/**
 * embedded → SQLite at storage.boltPath; external → the adapter the database
 * URI names (postgres:// or postgresql:// PostgreSQL, mongodb:// or
 * mongodb+srv:// MongoDB), in the background (`ready` resolves once it is
 * open). Logs the backend, never the password.
 */
function openStore(config: ServerConfig, logger: pino.Logger): { store: Store; ready: Promise<void> } {
  if (config.storage.backend === "external") {
    const { adapter, uri } = externalDatabase(config);
    const shown = redactUri(uri);
    const options = {
      database: config.database.database,
      onRetry: (error: Error, delayMs: number) =>
        logger.warn({ database: shown, error: redactUri(error.message), retryInMs: delayMs }, "the external store is unreachable; retrying"),
    };
    const { store, ready } = adapter.connect(uri, options);
    return {
      store,
      ready: ready.then(
        () => void logger.info({ backend: store.backend, database: shown }, "opened the external store"),
        (error: Error) => {
          throw new Error(`cannot open the ${adapter.kind} store at ${shown} (database.*): ${redactUri(error.message)}`);
        },
      ),
    };
  }
  takeStateLock(config.storage.boltPath);
  try {
    const store = new SqliteStore(config.storage.boltPath);
    logger.info({ backend: store.backend, path: config.storage.boltPath }, "opened the embedded store");
    return { store, ready: Promise.resolve() };
  } catch (error) {
    fail(`cannot open the embedded store at ${config.storage.boltPath} (storage.boltPath): ${(error as Error).message}`, 1);
  }
}

/** This process's lock on the embedded store (store/state-lock.ts); exits 1 naming the holder when another process has it. */
function takeStateLock(boltPath: string): void {
  try {
    lockState(boltPath);
  } catch (error) {
    fail(
      error instanceof StateLockedError ? error.message : `cannot lock the embedded store at ${boltPath} (storage.boltPath): ${(error as Error).message}`,
      1,
    );
  }
}

function readConfig(path: string | undefined, defaults?: Partial<Record<ConfigKey, string>>): ServerConfig {
  try {
    return loadConfig({ path, defaults });
  } catch (error) {
    if (error instanceof ConfigError) fail(`invalid configuration:\n  ${error.message.replaceAll("\n", "\n  ")}`);
    throw error;
  }
}

function banner(url: URL, config: ServerConfig, adminToken: string | null, uiPasswordFile: string | null): string {
  const lines = [`svc ${VERSION} is serving at ${url.origin}`, `Web UI: ${url.origin}/ui/`];
  if (config.externalUrlFromListen) {
    lines.push(
      `externalUrl is not set: collectors, install snippets and bootstrap files use ${config.externalUrl} (this host only).`,
      "To onboard collectors on other hosts, set externalUrl (or EXTERNAL_URL) to this server's https URL and restart.",
    );
  }
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
  if (uiPasswordFile !== null) {
    lines.push(
      "",
      `UI login: admin, password in ${uiPasswordFile}`,
      "  (readable only by this server's user; sign in, keep the password somewhere safe, then delete the file)",
    );
  }
  return lines.join("\n") + "\n";
}

const say = (line: string) => process.stdout.write(line + "\n");

/** The file beside the state that holds the first web UI admin's password. */
const FIRST_PASSWORD_FILE = "ui-admin-password";

/**
 * Creates the web UI's first admin with its password in a 0600 file beside
 * the state, never on stdout (journald and container logs keep stdout).
 * The file is written under a temporary name before the account exists and
 * renamed once it does, so there is never an admin whose password is
 * nowhere, nor a file naming the password of an admin another replica made
 * first. The file's path, or null when no admin was made (one exists, or the
 * file cannot be written: logged, and the next start tries again).
 */
async function firstAdmin(app: App, config: ServerConfig, logger: pino.Logger): Promise<string | null> {
  if (!(await app.users.needsFirstAdmin())) return null;
  const path = resolve(dirname(config.storage.boltPath), FIRST_PASSWORD_FILE);
  const staged = `${path}.${process.pid}`;
  const password = randomPassword(20);
  try {
    rmSync(staged, { force: true });
    createPrivateFile(staged, password + "\n");
  } catch (error) {
    logger.error({ err: error, path }, "the web UI's first admin is not created: its password file cannot be written (the next start tries again)");
    return null;
  }
  try {
    if ((await app.users.bootstrapAdmin(password)) === null) return null;
    renameSync(staged, path);
    syncDir(dirname(path));
    return path;
  } finally {
    rmSync(staged, { force: true });
  }
}

/**
 * The embedded key file was missing and this start made a new one, yet the
 * store holds values sealed with another key: the file was lost, and with a
 * new key the server would look ready while every delivery of those secrets
 * failed. Removes the new file (so the next start says the same) and exits
 * naming the file to restore.
 */
async function refuseLostKey(store: Store, keyFile: string, secrets: Secrets, statePath: string): Promise<void> {
  const foreign = [...(await sealedKeys(store)).entries()].filter(([id]) => id !== secrets.keyId);
  if (foreign.length === 0) return;
  await store.close();
  unlinkSync(keyFile);
  syncDir(dirname(keyFile));
  const count = foreign.reduce((sum, [, n]) => sum + n, 0);
  fail(
    `the secrets key file ${keyFile} is missing, but the state file ${statePath} holds ${count} values sealed with key ${foreign.map(([id]) => id).join(", ")}. ` +
      `Restore ${keyFile} from the backup taken with the state file (or set secrets.keyFile or SVC_SECRETS_KEY to that key) and start again; ` +
      "svc-server does not start with a new key, which would leave those secrets unreadable.",
    1,
  );
}

async function run(options: { config?: string; quickstart?: boolean }): Promise<void> {
  const config = readConfig(options.config, options.quickstart ? QUICKSTART_DEFAULTS : undefined);
  const logger = pino({ level: config.logging.level, base: { service: "svc-server" }, timestamp: pino.stdTimeFunctions.isoTime });
  let secrets;
  let createdKeyFile: string | null = null;
  try {
    secrets = secretsFor(config, logger, (path) => (createdKeyFile = path));
  } catch (error) {
    fail(`${(error as Error).message} (secrets.keyFile, secrets.key)`, 1);
  }
  const { store, ready } = openStore(config, logger);
  if (createdKeyFile !== null) await refuseLostKey(store, createdKeyFile, secrets, config.storage.boltPath);
  let app;
  try {
    app = await createApp(config, store, logger, gitDirFor(config), secrets);
  } catch (error) {
    await store.close();
    fail(`cannot open the config repository beside ${config.storage.boltPath}: ${(error as Error).message}`, 1);
  }
  let http;
  try {
    http = app.listen();
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
    await app.stop();
    await store.close();
    clearTimeout(force);
    logger.info("stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
  // Listening already, so probes see "alive, not ready" while the database is unreachable.
  try {
    await ready;
  } catch (error) {
    if (stopping) return;
    fail((error as Error).message, 1);
  }
  if (stopping) return;
  await app.start();
  // Only once listening: a first start that cannot listen must not create the
  // admin account, or its credential would never be shown (the next start shows none).
  const adminToken = await app.accounts.bootstrapAdmin(config.bootstrap.adminToken);
  if (adminToken !== null && config.bootstrap.adminToken !== "") {
    logger.info("created the admin service account with bootstrap.adminToken");
  }
  // The web UI's first admin: its password goes to a file only this user reads, and is stored only hashed.
  const uiPasswordFile = await firstAdmin(app, config, logger);
  // Quick-start only: a production server without externalUrl keeps refusing to hand collectors a guessed URL.
  if (options.quickstart && config.externalUrl === "") {
    config.externalUrl = listenFallbackUrl(http.url);
    config.externalUrlFromListen = true;
  }
  http.markStarted();
  logger.info({ url: http.url.origin, store: store.backend, configFile: config.file }, "svc-server ready");
  process.stdout.write(banner(http.url, config, adminToken === null || config.bootstrap.adminToken !== "" ? null : adminToken, uiPasswordFile));
}

/**
 * `svc-server migrate --from embedded --to external`: the state file, its
 * audit log and the config history beside it, copied into the external
 * database the same configuration names, then verified. The server should be
 * stopped meanwhile, so the copy is of one moment.
 */
async function migrateCommand(options: { from: string; to: string; force?: boolean; config?: string }): Promise<void> {
  if (options.from !== "embedded" || options.to !== "external") {
    fail(`migrate copies --from embedded --to external; --from ${options.from} --to ${options.to} is not supported.`);
  }
  const config = readConfig(options.config);
  const statePath = config.storage.boltPath;
  if (!existsSync(statePath)) fail(`there is no embedded state file at ${statePath} (storage.boltPath) to migrate from.`, 1);
  externalDatabase(config); // refused before anything is locked or opened
  // The configuration requires the key the external servers will use (secrets.*).
  const secrets = secretsFor(config, pino({ level: "silent" }));
  takeStateLock(statePath);
  const source = new SqliteStore(statePath);
  const foreign = [...(await sealedKeys(source)).entries()].filter(([id]) => id !== secrets.keyId);
  if (foreign.length > 0) {
    await source.close();
    const count = foreign.reduce((sum, [, n]) => sum + n, 0);
    fail(
      `${count} secrets in the embedded store are sealed with key ${foreign.map(([id]) => id).join(", ")}, but secrets.* names key ${secrets.keyId}. ` +
        `The external servers must use the embedded server's key: set secrets.keyFile to ${defaultKeyFile(statePath)} (or the file it used), or SVC_SECRETS_KEY to its contents.`,
      1,
    );
  }
  let target: Store;
  try {
    target = await openExternalNow(config);
  } catch (error) {
    await source.close();
    fail((error as Error).message, 1);
  }
  try {
    const summary = await migrate(
      { store: source, repo: await ConfigRepo.open(gitDirFor(config)) },
      { store: target, repo: ConfigRepo.inStore(target) },
      { force: options.force, progress: say },
    );
    const documents = Object.values(summary.collections).reduce((sum, c) => sum + c.count, 0);
    say(
      `verified: ${documents} documents in ${Object.keys(summary.collections).length} collections, ` +
        `${summary.audit.count} audit entries and the config history (head ${summary.head ?? "none"}) match the source.`,
    );
    say(`secrets are sealed with key ${secrets.keyId}: start every external server with this same secrets key (secrets.keyFile or SVC_SECRETS_KEY).`);
  } catch (error) {
    fail(`migrate: ${redactUri((error as Error).message)}`, 1);
  } finally {
    await source.close();
    await target.close();
  }
}

/** The external store the configuration names, opened now (a command does not wait for a database that is down). */
async function openExternalNow(config: ServerConfig): Promise<Store> {
  const { adapter, uri } = externalDatabase(config);
  try {
    return await adapter.open(uri, { database: config.database.database });
  } catch (error) {
    throw new Error(`cannot open the ${adapter.kind} store at ${redactUri(uri)} (database.*): ${redactUri((error as Error).message)}`);
  }
}

/**
 * The store a maintenance command works on: the embedded one under the state
 * lock (so the server must be stopped: exits 1 naming it otherwise), or the
 * external one, beside the replicas that keep running.
 */
async function openStoreNow(config: ServerConfig): Promise<Store> {
  if (config.storage.backend === "external") {
    try {
      return await openExternalNow(config);
    } catch (error) {
      fail((error as Error).message, 1);
    }
  }
  if (!existsSync(config.storage.boltPath)) fail(`there is no embedded state file at ${config.storage.boltPath} (storage.boltPath).`, 1);
  takeStateLock(config.storage.boltPath);
  return new SqliteStore(config.storage.boltPath);
}

/** Who runs a maintenance command, as the audit log names them: `cli:<login on this host>`. */
function cliActor(): Actor {
  let name: string;
  try {
    name = userInfo().username;
  } catch {
    name = `uid-${process.getuid?.() ?? "unknown"}`;
  }
  return { actor: `cli:${name}`, remoteAddr: null };
}

/** Key-file notices of a maintenance command (a key created, another one also opened) on stderr, as the server logs them. */
const noticeLogger = pino({ level: "info", base: null, timestamp: false }, pino.destination(2));

/** `svc-server secrets rotate-key`: see server/secrets/rotate.ts. */
async function rotateKeyCommand(options: { config?: string; newKeyFile?: string }): Promise<void> {
  const config = readConfig(options.config);
  const store = await openStoreNow(config);
  try {
    const plan = planRotation(keySource(config), options.newKeyFile, noticeLogger);
    const outcome = await resealAll(store, plan.keyring, cliActor());
    finishRotation(plan);
    const from = Object.entries(outcome.from)
      .map(([id, n]) => `${n} from key ${id}`)
      .join(", ");
    say(`re-sealed ${outcome.count} secret(s) under key ${outcome.to}${from === "" ? "" : ` (${from})`}.`);
    if (outcome.unreadable.length > 0) {
      const some = outcome.unreadable.slice(0, 5).join(", ") + (outcome.unreadable.length > 5 ? ", …" : "");
      say(
        `left ${outcome.unreadable.length} value(s) that no key opens as they were (${some}); ` +
          "put the key that sealed them beside the key file with the suffix .previous and run rotate-key again to re-seal them.",
      );
    }
    if (plan.staged !== null)
      say(`${plan.keyFile} now holds key ${outcome.to}: back it up with the state; the previous key opens nothing in the store any more.`);
    else if (plan.keyFile === null) say(`start the server with secrets.key (SVC_SECRETS_KEY) set to the new key ${outcome.to}.`);
    else if (config.storage.backend === "external")
      say(`every value is sealed with key ${outcome.to}: remove the other key files (.next, .previous) from every replica.`);
  } catch (error) {
    fail(`rotate-key: ${(error as Error).message}`, 1);
  } finally {
    await store.close();
  }
}

/** `svc-server history purge-secrets`: see server/configstore/purge.ts. */
async function purgeSecretsCommand(options: { config?: string }): Promise<void> {
  const config = readConfig(options.config);
  let secrets;
  try {
    secrets = secretsFor(config, noticeLogger);
  } catch (error) {
    fail(`${(error as Error).message} (secrets.keyFile, secrets.key)`, 1);
  }
  const store = await openStoreNow(config);
  const configStore = await openConfigStore(store, gitDirFor(config));
  try {
    const outcome = await purgeSecrets(configStore, store, new SecretVault(store, secrets), cliActor());
    if (outcome === null) {
      say("no commit holds plaintext in a sensitive field; the history is unchanged.");
      return;
    }
    say(`rewrote ${outcome.ids.size} commit(s): the branch moved from ${outcome.before} to ${outcome.after}.`);
    say(
      `${outcome.values} plaintext value(s) are now named by secret id (${outcome.sealed} the working tree does not use were sealed anew); ` +
        `${outcome.remapped} record(s) now name the new commit ids.`,
    );
    say(`the old history, plaintext included, is kept at ${outcome.keptRef}; once backups and clones of it are replaced, delete it with`);
    say(`  svc-server history drop-ref ${outcome.keptRef}${options.config ? ` -c ${options.config}` : ""}`);
  } catch (error) {
    fail(error instanceof PlaintextInWorktreeError ? error.message : `purge-secrets: ${(error as Error).message}`, 1);
  } finally {
    configStore.close();
    await store.close();
  }
}

/** `svc-server history drop-ref <ref>`: see dropKeptRef in server/configstore/purge.ts. */
async function dropRefCommand(ref: string, options: { config?: string }): Promise<void> {
  const config = readConfig(options.config);
  const store = await openStoreNow(config);
  const configStore = await openConfigStore(store, gitDirFor(config));
  try {
    const kept = await configStore.repo.keptRefs();
    if (!kept.has(ref)) {
      fail(kept.size === 0 ? `${ref} is not a kept ref; there are none.` : `${ref} is not a kept ref; kept refs: ${[...kept.keys()].join(", ")}.`, 1);
    }
    const { commit, objects, remapped } = await dropKeptRef(configStore, store, ref, cliActor());
    say(
      `deleted ${ref} (${commit}) and the ${objects} object(s) no other ref reaches${remapped > 0 ? `; ${remapped} record(s) now name the rewritten commits` : ""}.`,
    );
  } catch (error) {
    fail(`drop-ref: ${(error as Error).message}`, 1);
  } finally {
    configStore.close();
    await store.close();
  }
}

/** `svc-server history refs`: the kept refs and the commits they name. */
async function refsCommand(options: { config?: string }): Promise<void> {
  const config = readConfig(options.config);
  const store = await openStoreNow(config);
  const configStore = await openConfigStore(store, gitDirFor(config));
  try {
    for (const [name, commit] of await configStore.repo.keptRefs()) say(`${commit} ${name}`);
  } finally {
    configStore.close();
    await store.close();
  }
}

const program = new Command("svc-server")
  .description("svc control plane: REST API, collector channels and web UI")
  .version(VERSION)
  .option("-c, --config <path>", "configuration file (default /etc/svc/config.yaml when it exists)")
  .option("--quickstart", "keep state in ./.data unless storage.boltPath is set (the README quick-start)")
  .enablePositionalOptions()
  .action(run);
program
  .command("migrate")
  .description("copy the state, audit log and config history of the embedded store into the external database, and verify the copy")
  .requiredOption("--from <backend>", "where to copy from: embedded (storage.boltPath)")
  .requiredOption("--to <backend>", "where to copy to: external (database.*)")
  .option("--force", "replace what a target that is not empty holds")
  .option("-c, --config <path>", "configuration file naming both stores (default /etc/svc/config.yaml when it exists)")
  .action(migrateCommand);
const configOption = ["-c, --config <path>", "configuration file (default /etc/svc/config.yaml when it exists)"] as const;
const secretsCommand = program.command("secrets").description("the key that seals the secrets kept in the store");
secretsCommand
  .command("rotate-key")
  .description(
    "re-seal every secret in the store under another key, audited (embedded: a new key staged at <key file>.next, then moved over the key file; external: the key the configuration seals with)",
  )
  .option("--new-key-file <path>", "the key to rotate to (base64 of 32 bytes); embedded default: a new random key")
  .option(...configOption)
  .action(rotateKeyCommand);
const historyCommand = program.command("history").description("the configuration history (git)");
historyCommand
  .command("purge-secrets")
  .description("rewrite every commit without plaintext in sensitive fields (new commit ids; the old head kept as a ref), audited")
  .option(...configOption)
  .action(purgeSecretsCommand);
historyCommand
  .command("drop-ref")
  .description("delete a kept ref (refs/svc/…) and every object only it reached, audited")
  .argument("<ref>", "the kept ref, e.g. refs/svc/before-purge-20260102T030405Z")
  .option(...configOption)
  .action(dropRefCommand);
historyCommand
  .command("refs")
  .description("list the kept refs and the commits they name")
  .option(...configOption)
  .action(refsCommand);
program.parseAsync().catch((error: unknown) => fail(`failed to start: ${(error as Error).stack ?? String(error)}`, 1));
