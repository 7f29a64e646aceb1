/**
 * Issue 20's acceptance, item by item, on real server processes logging at
 * trace level: a destination carries an `Authorization` header; a viewer's
 * reads, `GET /changes`, the commit history, `git log -p` of
 * `GET /commits/export`, the pipeline preview, config history, the effective
 * config a collector reports, publish status, the audit log, every server's
 * log and a dump of the store hold no plaintext of it, while the config
 * delivered over OpAMP and over remote config does. Then
 * `svc-server secrets rotate-key` and a restart: every collector is
 * delivered byte-identical configs under the same hashes. Once on the
 * embedded store, once on PostgreSQL with two replicas sharing the key.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@connectrpc/connect";
import type { CollectorService } from "../../server/gen/collector/v1/collector_pb.ts";
import { testDatabases, type TestDatabases } from "../../server/store/testdb.ts";
import { jsonCaller } from "../client.ts";
import { until } from "../opamp/helpers.ts";
import { SupervisorLikeClient } from "../opamp/supervisor-client.ts";
import { remoteConfigClient } from "../remotecfg/client.ts";
import { bootstrapToken, cli, freePort, killAll, REPO, removeTempDirs, startServer, tempDir, type ServerProcess } from "../process/spawn.ts";

const ADMIN = bootstrapToken();
/** The credential under test: distinctive, and with characters each runtime quotes or escapes. */
const PLAINTEXT = `Bearer sk-live-${randomBytes(12).toString("hex")}$"\\`;
/** How the credential's tell-tale core may appear anywhere, whatever the escaping around it. */
const CORE = PLAINTEXT.slice("Bearer ".length, "Bearer sk-live-".length + 24);

let pg: TestDatabases;
const dirs: string[] = [];
beforeAll(async () => {
  pg = await testDatabases();
});
afterAll(async () => {
  await killAll();
  removeTempDirs();
  await pg?.dropAll();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

type Call = ReturnType<typeof jsonCaller>;

function run(command: string[]): string {
  const result = Bun.spawnSync(command, { cwd: REPO, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root" } });
  if (result.exitCode !== 0) throw new Error(`${command.join(" ")} → ${result.exitCode}: ${result.stderr.toString()}`);
  return result.stdout.toString();
}

function expectClean(what: string, text: string): void {
  if (text.includes(CORE)) throw new Error(`${what} holds the plaintext`);
}

/** The whole configuration with one Runtime O and one Runtime R collector routed through the destination, committed and published. */
async function deploy(admin: Call) {
  const source = await admin<{ id: string }>("/sources", "POST", { name: "app", type: "filelog", config: { include: ["/var/log/app/*.log"] } });
  const destination = await admin<{ id: string }>("/destinations", "POST", {
    name: "backend",
    type: "otlphttp",
    config: { endpoint: "https://otlp.example.com", headers: { Authorization: PLAINTEXT, "X-Scope-OrgID": { value: "tenant-7", secret: false } } },
  });
  const pipeline = await admin<{ id: string }>("/pipelines", "POST", {
    name: "logs",
    signal: "logs",
    topology: {
      nodes: [
        { id: "in", kind: "source" },
        { id: "out", kind: "destination", ref: destination.id },
      ],
      edges: [{ id: "e1", source: "in", target: "out" }],
    },
  });
  const otelcol = await admin<{ id: string }>("/collectors", "POST", { name: "otelcol-1" });
  const alloy = await admin<{ id: string }>("/collectors", "POST", { name: "alloy-1", managementMode: "rcfg-remotecfg" });
  for (const collector of [otelcol, alloy]) {
    await admin(`/collectors/${collector.id}/sources`, "POST", { sourceId: source.id });
    await admin(`/collectors/${collector.id}/destinations`, "POST", { destinationId: destination.id });
    await admin("/routes", "POST", { collectorId: collector.id, sourceId: source.id, pipelineId: pipeline.id });
  }
  return { destination, pipeline, otelcol, alloy };
}

/** Every read the issue names, as a viewer (and /changes before the commit); returns the texts read. */
async function viewerReads(viewer: Call, ids: Awaited<ReturnType<typeof deploy>>): Promise<string[]> {
  const texts: string[] = [];
  const read = async (path: string, method = "GET", body?: unknown) => texts.push(JSON.stringify(await viewer(path, method, body)));
  await read("/destinations");
  await read(`/destinations/${ids.destination.id}`);
  await read(`/collectors/${ids.otelcol.id}/destinations`);
  const topology = await viewer(`/pipelines/${ids.pipeline.id}/topology`);
  await read(`/pipelines/${ids.pipeline.id}/topology/preview`, "POST", topology);
  await read(`/pipelines/${ids.pipeline.id}/topology/preview?runtime=alloy`, "POST", topology);
  await read("/commits");
  await read("/publish/status");
  for (const collector of [ids.otelcol, ids.alloy]) {
    await read(`/collectors/${collector.id}`);
    const history = await viewer<{ items: { seq: number }[] }>(`/collectors/${collector.id}/config-history`);
    texts.push(JSON.stringify(history));
    for (const entry of history.items) await read(`/collectors/${collector.id}/config-history/${entry.seq}`);
    await read(`/collectors/${collector.id}/effective-config`);
  }
  await read("/audit?limit=500");
  return texts;
}

/** `git log -p --all` of a mirror clone of GET /commits/export. */
async function exportedHistory(base: string, token: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "svc-accept-"));
  dirs.push(dir);
  const res = await fetch(`${base}/api/v1/commits/export`, { headers: { Authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  writeFileSync(join(dir, "svc.bundle"), new Uint8Array(await res.arrayBuffer()));
  run(["git", "clone", "--quiet", "--mirror", join(dir, "svc.bundle"), join(dir, "clone.git")]);
  return run(["git", "--git-dir", join(dir, "clone.git"), "log", "-p", "--all"]);
}

interface Delivered {
  opampHash: string;
  opamp: string;
  alloyHash: string;
  alloy: string;
}

/** What each collector is delivered now: the OpAMP client's running config, and a full remote-config fetch. */
async function delivered(client: SupervisorLikeClient, rcfg: Client<typeof CollectorService>, alloyId: string): Promise<Delivered> {
  const answer = await rcfg.getConfig({ id: alloyId, hash: "" });
  return { opampHash: client.configHash, opamp: client.config, alloyHash: answer.hash, alloy: answer.content };
}

/** The scenario on servers `a` (API, publish, remote config) and `b` (OpAMP); `restart` rotates the key and brings them back. */
async function scenario(
  start: () => Promise<{ a: ServerProcess; b: ServerProcess }>,
  dump: () => string,
  rotate: (servers: ServerProcess[]) => Promise<{ a: ServerProcess; b: ServerProcess }>,
): Promise<void> {
  let { a, b } = await start();
  const admin = jsonCaller(a.base, ADMIN);
  const ids = await deploy(admin);
  const viewerToken = (
    await admin<{ token: string }>("/service-accounts", "POST", { name: "viewer", scopes: ["config:read", "collectors:read", "audit:read"] })
  ).token;
  const viewer = jsonCaller(b.base, viewerToken);
  const texts = [JSON.stringify(await viewer("/changes"))];
  await admin("/commit", "POST", { message: "backend with a credential" });

  const { token: opampToken } = await admin<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp", collectorId: ids.otelcol.id });
  const client = new SupervisorLikeClient([`${b.base.replace(/^http/, "ws")}/v1/opamp`], opampToken);
  await client.start();
  const alloyToken = (await admin<{ token: string }>(`/collectors/${ids.alloy.id}/otlp-token`, "POST")).token;
  await admin("/publish", "POST");
  await until(async () => client.config.includes("otlp.example.com"), 15_000);
  const rcfg = remoteConfigClient(a.base, alloyToken);
  const before = await delivered(client, rcfg, ids.alloy.id);

  // The wire to the collector is the one place the plaintext goes, quoted for each runtime.
  expect(before.opamp).toContain(JSON.stringify(PLAINTEXT.replaceAll("$", () => "$$")));
  expect(before.alloy).toContain(JSON.stringify(PLAINTEXT));
  expect(before.opamp).toContain('"tenant-7"');
  // The OpAMP client has reported the plaintext back in its effective config by now.
  await until(async () => (await admin<{ effective: unknown }>(`/collectors/${ids.otelcol.id}/effective-config`)).effective !== null, 10_000);

  texts.push(...(await viewerReads(viewer, ids)));
  texts.push(await exportedHistory(b.base, viewerToken));
  for (const [i, text] of texts.entries()) expectClean(`read ${i}`, text);
  expect(texts.join("\n")).toContain("tenant-7");

  for (const server of [a, b]) expectClean("the server log", server.stdout() + server.stderr());

  ({ a, b } = await rotate([a, b]));
  // The same servers' data, now under a new key: the collectors see nothing change.
  await until(async () => client.connectedTo !== "" && client.connects >= 2, 15_000);
  const rcfgAfter = remoteConfigClient(a.base, alloyToken);
  await Bun.sleep(500);
  const after = await delivered(client, rcfgAfter, ids.alloy.id);
  expect(after).toEqual(before);
  expect(client.seen().configHashes).toEqual(new Set([before.opampHash]));
  for (const server of [a, b]) expectClean("the server log after rotation", server.stdout() + server.stderr());
  client.stop();
  for (const server of new Set([a, b])) await server.stop("SIGTERM");
  expectClean("a dump of the store", dump());
}

describe("a destination's Authorization header", () => {
  test("embedded store: nothing but the collectors' wire holds it, and a rotated key delivers the same bytes", async () => {
    const dir = tempDir();
    const statePath = join(dir, "state.db");
    const port = freePort();
    const env = { SVC_BOOTSTRAP_ADMINTOKEN: ADMIN, SVC_LOGGING_LEVEL: "trace", SVC_EXTERNALURL: `http://127.0.0.1:${port}` };
    const start = async () => {
      const server = await startServer({ port, statePath, env });
      return { a: server, b: server };
    };
    await scenario(
      start,
      () => {
        // The state file's raw bytes (freed pages included), its text dump, and every git object, reachable or not.
        const raw = readdirSync(dir)
          .filter((name) => name.startsWith("state.db"))
          .map((name) => readFileSync(join(dir, name)).toString("latin1"))
          .join("\n");
        const objects = run(["git", "--git-dir", join(dir, "config.git"), "cat-file", "--batch-all-objects", "--batch"]);
        return raw + run(["sqlite3", statePath, ".dump"]) + objects;
      },
      async ([server]) => {
        await server!.stop("SIGTERM");
        const rotated = await cli(["secrets", "rotate-key"], { SVC_STORAGE_BOLTPATH: statePath });
        expect(rotated).toMatchObject({ code: 0 });
        const out = rotated.out;
        expect(out).toMatch(/re-sealed [1-9]\d* secret\(s\) under key [0-9a-f]{16}/);
        expectClean("rotate-key's output", out);
        return start();
      },
    );
  }, 120_000);

  test("PostgreSQL, two replicas sharing the key file: the same, with the key rotated in README's steps while they serve", async () => {
    const uri = await pg.create("secrets_acceptance");
    const keyDir = tempDir();
    const keyFile = join(keyDir, "secrets.key");
    const writeKey = (path: string) => writeFileSync(path, randomBytes(32).toString("base64") + "\n", { mode: 0o600 });
    writeKey(keyFile);
    const ports = [freePort(), freePort()];
    const env = { SVC_STORAGE_BACKEND: "external", SVC_DATABASE_URI: uri, SVC_SECRETS_KEYFILE: keyFile };
    const replica = (port: number) =>
      startServer({
        port,
        statePath: join(tempDir(), "state.db"),
        env: { ...env, SVC_BOOTSTRAP_ADMINTOKEN: ADMIN, SVC_LOGGING_LEVEL: "trace", SVC_EXTERNALURL: `http://127.0.0.1:${port}` },
      });
    const start = async () => ({ a: await replica(ports[0]!), b: await replica(ports[1]!) });
    /** One replica at a time, so the collectors always have one to reach. */
    const rolling = async (servers: ServerProcess[]) => {
      const next: ServerProcess[] = [];
      for (const [i, server] of servers.entries()) {
        await server.stop("SIGTERM");
        next.push(await replica(ports[i]!));
      }
      return next;
    };
    await scenario(
      start,
      () => run(["pg_dump", "--data-only", uri]),
      async (servers) => {
        writeKey(keyFile + ".next");
        let live = await rolling(servers);
        renameSync(keyFile, keyFile + ".previous");
        renameSync(keyFile + ".next", keyFile);
        live = await rolling(live);
        const rotated = await cli(["secrets", "rotate-key"], env);
        expect(rotated).toMatchObject({ code: 0 });
        const out = rotated.out;
        expect(out).toMatch(/re-sealed [1-9]\d* secret\(s\) under key [0-9a-f]{16}/);
        expectClean("rotate-key's output", out);
        rmSync(keyFile + ".previous");
        live = await rolling(live);
        return { a: live[0]!, b: live[1]! };
      },
    );
  }, 240_000);
});
