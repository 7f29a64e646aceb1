import { expect, test } from "bun:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { apiRoutes } from "../api/index.ts";
import { createApp } from "../app.ts";
import { loadConfig } from "../config/load.ts";
import { SqliteStore } from "../store/sqlite.ts";
import { openApiDocument } from "./openapi.ts";

test("the generated document is valid OpenAPI 3.1 with unique operation ids", async () => {
  const dir = mkdtempSync(join(tmpdir(), "svc-openapi-"));
  const store = new SqliteStore(":memory:");
  // The default storage.boltPath is not writable here: state and key go in the temporary directory.
  const config = loadConfig({ path: null, env: { SVC_STORAGE_BOLTPATH: join(dir, "state.db") } });
  const app = await createApp(config, store, pino({ level: "silent" }), join(dir, "config.git"));
  const doc = openApiDocument(apiRoutes(app), "0.0.0-test");
  const result = await new Validator().validate(doc);
  expect(result.errors ?? []).toEqual([]);
  expect(result.valid).toBe(true);
  const ids = Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap((m) => Object.values(m).map((op) => op.operationId));
  expect(new Set(ids).size).toBe(ids.length);
  await app.stop();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});
