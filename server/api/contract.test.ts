/**
 * The UI's route contract (shared/api-routes.ts) names real routes: for each
 * entry the server declares a route of that method and path whose answer is
 * the very schema the contract names (or, for one without, no answer schema).
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { API_ROUTES, type RouteContract } from "../../shared/api-routes.ts";
import { createApp } from "../app.ts";
import { loadConfig } from "../config/load.ts";
import { SqliteStore } from "../store/sqlite.ts";
import { apiRoutes } from "./index.ts";

test("every route of the UI's contract is a server route with the same answer schema", async () => {
  const dir = mkdtempSync(join(tmpdir(), "svc-contract-"));
  const store = new SqliteStore(":memory:");
  const config = loadConfig({ path: null, env: { SVC_STORAGE_BOLTPATH: join(dir, "state.db") } });
  const app = await createApp(config, store, pino({ level: "silent" }), join(dir, "config.git"));
  try {
    const served = new Map(apiRoutes(app).map((r) => [`${r.method} ${r.path}`, r]));
    const mismatched = Object.entries(API_ROUTES as Record<string, RouteContract>).flatMap(([key, contract]) => {
      const route = served.get(key);
      if (!route) return [`${key}: no such route`];
      return route.response === contract.response ? [] : [`${key}: the contract names another answer schema than the route`];
    });
    expect(mismatched).toEqual([]);
  } finally {
    await app.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
