/**
 * `svc-server migrate --from embedded --to external` end to end: a server on
 * the embedded store is populated through the API (config, commits, a
 * publish, collectors, tokens, audit), the real command copies it into a
 * fresh PostgreSQL database, and a server on that database answers every
 * read exactly as the embedded one did. A target that is not empty is
 * refused without --force, and so is a secrets key other than the one that
 * sealed the embedded store's secrets; with the same key the copied
 * collector token opens on the external server.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { SCOPES } from "../../server/auth/scopes.ts";
import { startTestServer, tokenWithScopes, type TestServer } from "../harness.ts";
import { deploymentKit } from "../deployment.ts";
import { PostgresStore } from "../../server/store/postgres.ts";
import { testDatabases, type TestDatabases } from "../../server/store/testdb.ts";
import { cli } from "./spawn.ts";

let pg: TestDatabases;
beforeAll(async () => {
  pg = await testDatabases();
});
afterAll(() => pg?.dropAll());

const migrateCli = (configPath: string, ...extra: string[]) => cli(["migrate", "--from", "embedded", "--to", "external", "-c", configPath, ...extra]);

/** Every read the API offers over what the test made, by path, as parsed JSON. */
async function answers(server: TestServer, token: string, collectorIds: string[], pipelineId: string): Promise<Record<string, unknown>> {
  const paths = [
    "/sources",
    "/destinations",
    "/pipelines",
    `/pipelines/${pipelineId}`,
    "/routes",
    "/changes",
    "/commits",
    "/publish/status",
    "/collectors",
    "/enrollment-tokens",
    "/service-accounts",
    "/users",
    "/audit?limit=500",
  ];
  for (const id of collectorIds) {
    paths.push(`/collectors/${id}`, `/collectors/${id}/sources`, `/collectors/${id}/destinations`, `/collectors/${id}/config-history`);
  }
  const out: Record<string, unknown> = {};
  for (const path of paths) {
    const res = await server.api(path, { token });
    expect(res.status, path).toBe(200);
    out[path] = await res.json();
  }
  return out;
}

describe("svc-server migrate", () => {
  test("copies a populated embedded store into PostgreSQL with identical API answers; a non-empty target needs --force", async () => {
    const embedded = await startTestServer();
    const call = embedded.call.bind(embedded);
    const route = await deploymentKit(call);
    const collectors: string[] = [];
    for (const name of ["web-1", "web-2"]) {
      const collector = await call<{ id: string }>("/collectors", "POST", { name, environment: "prod", tags: { team: "payments" } });
      collectors.push(collector.id);
      await route(collector.id);
    }
    await call("/commit", "POST", { message: "first config" });
    await call("/publish", "POST", {});
    await call("/sources", "POST", { name: "pending edit", type: "filelog", config: { include: ["/var/log/other/*.log"] } });
    await call("/enrollment-tokens", "POST", { kind: "opamp" });
    const { token: collectorToken } = await call<{ token: string }>(`/collectors/${collectors[0]}/otlp-token`, "POST");
    const token = await tokenWithScopes(embedded, [...SCOPES], "migration-check");
    const pipelineId = (await call<{ items: { id: string }[] }>("/pipelines")).items[0]!.id;
    const before = await answers(embedded, token, collectors, pipelineId);
    const head = (before["/commits"] as { items: { commit: string }[] }).items[0]!.commit;
    await embedded.app.stop();
    await embedded.app.store.close();
    embedded.http.server.stop(true);

    const uri = await pg.create("migrate");
    const configPath = join(embedded.dir, "config.yaml");
    const keyFile = join(embedded.dir, "secrets.key"); // the embedded server created it beside its state file
    const config = (secrets: string) =>
      `storage:\n  backend: external\n  boltPath: ${join(embedded.dir, "state.db")}\ndatabase:\n  uri: ${uri}\nsecrets:\n${secrets}`;
    writeFileSync(configPath, config(""));
    const keyless = await migrateCli(configPath);
    expect(keyless.code).toBe(2);
    expect(keyless.err).toContain("secrets.keyFile");
    writeFileSync(configPath, config(`  key: ${randomBytes(32).toString("base64")}\n`));
    const wrongKey = await migrateCli(configPath);
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.err).toContain(`set secrets.keyFile to ${keyFile}`);
    writeFileSync(configPath, config(`  keyFile: ${keyFile}\n`));
    const first = await migrateCli(configPath);
    expect(first.err).toBe("");
    expect(first.code).toBe(0);
    expect(first.out).toContain(`head ${head}`);
    expect(first.out).toMatch(/^verified: \d+ documents in \d+ collections, \d+ audit entries/m);
    expect(first.out).toMatch(/^secrets are sealed with key [0-9a-f]{16}: start every external server with this same secrets key/m);

    const again = await migrateCli(configPath);
    expect(again.code).toBe(1);
    expect(again.err).toContain("not empty; pass --force");
    const forced = await migrateCli(configPath, "--force");
    expect(forced.err).toBe("");
    expect(forced.code).toBe(0);
    expect(forced.out).toContain("clearing the target (--force)");

    const external = await startTestServer({ SVC_SECRETS_KEYFILE: keyFile }, () => PostgresStore.open(uri));
    try {
      const after = await answers(external, token, collectors, pipelineId);
      expect(after).toEqual(before);
      // The sealed collector token was copied verbatim and opens with the same key.
      expect(await external.app.collectorTokens.current(collectors[0]!)).toBe(collectorToken);
      // What was copied keeps working: edits continue from the copied versions, history from the copied head.
      const committed = await external.api("/commit", { token, method: "POST", json: { message: "after the move" } });
      expect(committed.status).toBe(201);
      expect(((await committed.json()) as { parent: string }).parent).toBe(head);
    } finally {
      await external.stop();
    }
  }, 60_000);
});
