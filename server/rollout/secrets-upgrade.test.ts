/**
 * The start-up upgrade on a store an older server wrote (testdata/legacy):
 * plaintext in the working tree moves to the vault, the configs it rendered
 * and delivered lose their plaintexts yet deliver the same bytes, and what a
 * collector reported back loses them too, in one audited write; on both
 * backends.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { parse } from "yaml";
import { startTestServer, type TestServer } from "../../test/harness.ts";
import { paths, toYaml } from "../configstore/layout.ts";
import type { CollectorActivations, DestinationRecord, SourceRecord } from "../../shared/config-records.ts";
import { deliverable } from "../render/secrets.ts";
import type { RenderedConfig } from "./renderer.ts";
import { PostgresStore } from "../store/postgres.ts";
import { testDatabases, type TestDatabases } from "../store/testdb.ts";
import { redactRendered, upgradeSecrets } from "./secrets-upgrade.ts";
import { storedRendered } from "./stored-rendered.ts";
import { joinTemplate, templateId, type TemplateText } from "../render/attributes.ts";
import { isSecretRef } from "../../shared/sensitive.ts";
import { secretMarker } from "../secrets/values.ts";

const LEGACY = join(import.meta.dir, "testdata/legacy");
const tree = parse(readFileSync(join(LEGACY, "input.yaml"), "utf8")) as {
  sources: SourceRecord[];
  destinations: DestinationRecord[];
  activations: CollectorActivations;
};
const GATEWAY = 'Bearer up$grade "q" \\ é';
const OVERRIDE = "Bearer pa$word";
const LEAKS = ["up$grade", "up$$grade", "pa$word", "pa$$word"];

function rendered(runtime: RenderedConfig["runtime"], file: string): RenderedConfig {
  const body = readFileSync(join(LEGACY, file), "utf8");
  return { hash: createHash("sha256").update(body).digest("hex"), runtime, contentType: runtime === "alloy" ? "text/plain" : "text/yaml", body };
}
const OTELCOL = rendered("otelcol", "otelcol.yaml");
const ALLOY = rendered("alloy", "config.alloy");

/** The legacy Runtime O body as a template a filled-in config is stored by (stored-rendered.ts): one reference appended. */
const TEMPLATE: TemplateText = { runtime: "otelcol", pieces: [`${OTELCOL.body}# team: "`, '"\n'], slots: [{ key: "team", depth: 1 }] };
const TEMPLATE_ID = templateId(TEMPLATE);
const FILLED_BODY = joinTemplate(TEMPLATE, { team: "blue" });
const FILLED = { hash: createHash("sha256").update(FILLED_BODY).digest("hex"), runtime: "otelcol", contentType: "text/yaml" };

/** What a collector reports running: its own spellings of the values it was sent. */
const EFFECTIVE = [
  {
    name: "effective.yaml",
    contentType: "text/yaml",
    body: `headers:\n  Authorization: 'Bearer up$grade "q" \\ é'\n  X-Override: Bearer pa$word\n  X-Team: ops\n`,
  },
  { name: "effective.json", contentType: "application/json", body: JSON.stringify({ headers: { Authorization: GATEWAY, "X-Override": OVERRIDE } }) },
  { name: "effective.env", contentType: "text/plain", body: `AUTH="Bearer up$$grade \\"q\\" \\\\ é"\n` },
];

let pg: TestDatabases;
beforeAll(async () => {
  pg = await testDatabases();
});
afterAll(() => pg?.dropAll());

const backends: [string, () => Promise<TestServer>][] = [
  ["embedded (SQLite)", () => startTestServer()],
  ["external (PostgreSQL)", async () => startTestServer({}, async () => PostgresStore.open(await pg.create("upgrade")))],
];

describe.each(backends)("upgradeSecrets on %s", (_name, start) => {
  let server: TestServer;
  const log: string[] = [];
  const logger = pino({ level: "trace" }, { write: (line: string) => void log.push(line) });
  beforeAll(async () => {
    server = await start();
    const { configStore, store } = server.app;
    await configStore.edit(
      [
        ...tree.sources.map((r) => ({ path: paths.source(r.id), text: toYaml(r) })),
        ...tree.destinations.map((r) => ({ path: paths.destination(r.id), text: toYaml(r) })),
        { path: paths.activations(tree.activations.collectorId), text: toYaml(tree.activations) },
      ],
      [],
    );
    await store.write([
      { op: "put", collection: "rendered_configs", id: OTELCOL.hash, data: OTELCOL },
      { op: "put", collection: "rendered_configs", id: ALLOY.hash, data: ALLOY },
      { op: "put", collection: "config_templates", id: TEMPLATE_ID, data: TEMPLATE },
      { op: "put", collection: "rendered_configs", id: FILLED.hash, data: { ...FILLED, template: TEMPLATE_ID, values: { team: "blue" } } },
      { op: "put", collection: "effective_configs", id: "legacy-1", data: { collectorId: "legacy-1", files: EFFECTIVE, reportedAt: new Date().toISOString() } },
      {
        op: "put",
        collection: "effective_configs",
        id: "other",
        data: { collectorId: "other", files: [{ name: "c.yaml", contentType: "text/yaml", body: "a: 1\n" }], reportedAt: new Date().toISOString() },
      },
    ]);
  });
  afterAll(() => server?.stop());

  test("plaintext in the tree moves to the vault, one version per value, in one audited write with a log saying what to do next", async () => {
    const { app } = server;
    const result = await upgradeSecrets({ ...app, logger });
    expect(result).toEqual({ secrets: 3, files: 3, renderedConfigs: 2, configTemplates: 1, effectiveConfigs: 1 });

    const snapshot = await app.configStore.worktree();
    const gateway = snapshot.destinations.get("dst-gw")!.config.headers as Record<string, { secret: string }>;
    const spare = snapshot.destinations.get("dst-spare")!.config.headers as Record<string, { secret: string }>;
    const override = snapshot.activations.get("legacy-1")!.destinations[0]!.configOverrides.headers as Record<string, { secret: string }>;
    for (const ref of [gateway.Authorization, gateway["X-Team"], spare["X-Key"], override["X-Override"]]) expect(isSecretRef(ref)).toBe(true);
    expect(spare["X-Key"]).toEqual(gateway.Authorization!);
    expect(await app.vault.open(gateway.Authorization!.secret)).toBe(GATEWAY);
    expect(await app.vault.open(override["X-Override"]!.secret)).toBe(OVERRIDE);
    expect(await app.vault.open(gateway["X-Team"]!.secret)).toBe("ops");
    expect(snapshot.sources.get("src-app")!.config).toEqual({ include: ["/var/log/app/*.log"] });

    const changes = await app.configStore.changes();
    for (const leak of LEAKS) expect(changes.diff).not.toContain(leak);

    const audit = await app.store.queryAudit({ action: "secrets.migrate", limit: 10 });
    expect(audit.map((e) => [e.actor, e.resource, e.details])).toEqual([["system", "worktree", { ...result }]]);
    const line = JSON.parse(log.join("")) as { level: number; msg: string; secrets: number };
    expect(line).toMatchObject({ level: 40, secrets: 3, files: 3 });
    expect(line.msg).toContain("commit the working tree");
    expect(line.msg).toContain("svc-server history purge-secrets");
  });

  test("the configs collectors were delivered lose their plaintexts but deliver the same bytes, under the same hash", async () => {
    const { app } = server;
    for (const before of [OTELCOL, ALLOY]) {
      const after = (await app.store.get<RenderedConfig>("rendered_configs", before.hash))!.data;
      expect(after.hash).toBe(before.hash);
      for (const leak of LEAKS) expect(after.body).not.toContain(leak);
      expect(after.body).toContain('"<secret:');
      expect(await deliverable(after.runtime, after.body, (id) => app.vault.open(id))).toBe(before.body);
    }
  });

  test("a config stored as values loses the plaintexts of its template, read back with the same bytes delivered", async () => {
    const { app } = server;
    const after = (await storedRendered(app.store, FILLED.hash))!;
    expect(after.hash).toBe(FILLED.hash);
    for (const leak of LEAKS) expect(after.body).not.toContain(leak);
    expect(after.body).toContain('"<secret:');
    expect(after.body).toEndWith('# team: "blue"\n');
    expect(await deliverable(after.runtime, after.body, (id) => app.vault.open(id))).toBe(FILLED_BODY);
  });

  test("what a collector reported running loses every spelling of the plaintexts; other reports are left", async () => {
    const { app } = server;
    const effective = (await app.store.get<{ files: { body: string }[] }>("effective_configs", "legacy-1"))!.data;
    const text = effective.files.map((f) => f.body).join("\n");
    for (const leak of LEAKS) expect(text).not.toContain(leak);
    expect(text).toContain("<secret:");
    expect((await app.store.get("effective_configs", "other"))!.version).toBe(1);
  });

  test("a second start finds nothing to move and writes nothing", async () => {
    const { app } = server;
    const before = await app.store.count("secrets");
    expect(await upgradeSecrets({ ...app, logger })).toBeNull();
    expect(await app.store.count("secrets")).toBe(before);
    expect(await app.store.queryAudit({ action: "secrets.migrate", limit: 10 })).toHaveLength(1);
  });
});

describe("redactRendered", () => {
  test("a rendered body is redacted only where delivery gives back the same bytes", async () => {
    const id = Bun.randomUUIDv7();
    // The plaintext quoted as the runtime writes it, and again inside a longer string: replacing only whole strings keeps delivery exact.
    const body = 'a: "tok"\nb: "x \\"tok"\n';
    const redacted = await redactRendered({ runtime: "otelcol", body }, new Map([["tok", id]]));
    expect(redacted).toBe(`a: "${secretMarker(id)}"\nb: "x \\"${secretMarker(id)}"\n`);
    // A body that already holds a marker-shaped string would come back different: it is not touched.
    const other = Bun.randomUUIDv7();
    const marked = `a: "tok"\nb: "${secretMarker(other)}"\n`;
    expect(await redactRendered({ runtime: "otelcol", body: marked }, new Map([["tok", id]]))).toBeNull();
    expect(await redactRendered({ runtime: "otelcol", body: "a: 1\n" }, new Map([["tok", id]]))).toBeNull();
  });
});
