/**
 * Starts a real server on a loopback port with a fresh SQLite file, in this
 * process, and gives tests its URL, the admin token and a fetch helper. The
 * server is assembled and started as server/main.ts does (server/app.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { createApp, type App } from "../server/app.ts";
import { loadConfig, type ServerConfig } from "../server/config/load.ts";
import type { HttpServer } from "../server/http/server.ts";
import { SqliteStore } from "../server/store/sqlite.ts";
import type { Store } from "../server/store/store.ts";
import { api } from "./client.ts";

export interface TestServer {
  app: App;
  http: HttpServer;
  base: string;
  adminToken: string;
  dir: string;
  /** fetch against /api/v1 with the admin token unless `token` says otherwise (null = none). */
  api(path: string, init?: RequestInit & { token?: string | null; json?: unknown }): Promise<Response>;
  /** The web UI's bootstrap admin (`admin` and its password), created on first use (one argon2 hash). */
  uiAdmin(): Promise<{ username: string; password: string }>;
  /** An admin call that must succeed (any 2xx); its parsed JSON answer, undefined when empty. */
  call<T = Record<string, unknown>>(path: string, method?: string, json?: unknown): Promise<T>;
  stop(): Promise<void>;
}

/** `openStore` picks the store (default: SQLite at the config's boltPath); the server closes it on stop. */
export async function startTestServer(
  env: Record<string, string> = {},
  openStore: (config: ServerConfig) => Store | Promise<Store> = (config) => new SqliteStore(config.storage.boltPath),
): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), "svc-test-"));
  const config: ServerConfig = loadConfig({
    path: null,
    env: { SVC_LISTEN: "127.0.0.1:0", SVC_STORAGE_BOLTPATH: join(dir, "state.db"), SVC_LOGGING_LEVEL: "silent", ...env },
  });
  const store = await openStore(config);
  const app = await createApp(config, store, pino({ level: "silent" }));
  const http = app.listen();
  await app.start();
  const adminToken = (await app.accounts.bootstrapAdmin(config.bootstrap.adminToken))!;
  http.markStarted();
  const base = http.url.origin;
  let uiAdmin: Promise<{ username: string; password: string }> | undefined;
  return {
    app,
    http,
    base,
    adminToken,
    dir,
    api(path, init = {}) {
      const { token = adminToken, ...rest } = init;
      return api(base, token, path, rest);
    },
    uiAdmin() {
      return (uiAdmin ??= app.users.bootstrapAdmin().then((password) => {
        if (password === null) throw new Error("the UI admin was already created");
        return { username: "admin", password };
      }));
    },
    async call<T>(path: string, method = "GET", json?: unknown): Promise<T> {
      const res = await api(base, adminToken, path, { method, json });
      const text = await res.text();
      if (res.status < 200 || res.status >= 300) throw new Error(`${method} ${path} → ${res.status}: ${text}`);
      return (text === "" ? undefined : JSON.parse(text)) as T;
    },
    async stop() {
      await app.stop();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Mints a service account with exactly these scopes and returns its token. */
export async function tokenWithScopes(server: TestServer, scopes: string[], name = `t${Math.random().toString(36).slice(2)}`) {
  const res = await server.api("/service-accounts", { method: "POST", json: { name, scopes } });
  if (res.status !== 201) throw new Error(`minting a token failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { token: string }).token;
}
