/**
 * A restart or a replica switch changes nothing a collector sees (issue 19,
 * defect 10(b)). Real server processes; an agent that behaves as the OpAMP
 * supervisor does through opamp-go (its capabilities from svc's
 * supervisor.yaml, redial at once on close, full state on connect) runs
 * connect → publish → APPLIED → server restart → reconnect, and afterwards
 * has the same own-metrics credential and connection-settings hash, no config
 * with another hash, no collector restart from a changed offer, and no
 * `collector.metrics-token.rotate` beyond the first mint. Before tokens were
 * sealed in the store, the restarted server minted a new token here. A
 * rotation of the collector token offers it nothing (it takes no OpAMP
 * settings, and its own metrics carry the metrics credential); a rotation of
 * the metrics credential reaches it once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { testDatabases, type TestDatabases } from "../../server/store/testdb.ts";
import { deploymentKit } from "../deployment.ts";
import { jsonCaller } from "../client.ts";
import { bootstrapToken, freePort, killAll, removeTempDirs, startServer, tempDir, type ServerProcess } from "../process/spawn.ts";
import { until } from "./helpers.ts";
import { SupervisorLikeClient } from "./supervisor-client.ts";

const ADMIN = bootstrapToken();
let pg: TestDatabases;

beforeAll(async () => {
  pg = await testDatabases();
});
afterAll(async () => {
  await killAll();
  removeTempDirs();
  await pg?.dropAll();
});

const caller = (base: string) => jsonCaller(base, ADMIN);

const wsUrl = (server: ServerProcess) => `${server.base.replace(/^http/, "ws")}/v1/opamp`;

/** Routes a new collector, publishes, and runs the client until the collector is online, current and its config APPLIED. */
async function enrolled(call: ReturnType<typeof caller>, urls: string[]): Promise<{ client: SupervisorLikeClient; collectorId: string }> {
  const { id } = await call<{ id: string }>("/collectors", "POST", { name: "supervised" });
  const route = await deploymentKit(call);
  await route(id, "/var/log/supervised/*.log");
  await call("/commit", "POST", { message: "first" });
  const { token } = await call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp", collectorId: id });
  const client = new SupervisorLikeClient(urls, token);
  await client.start();
  await call(`/publish/${id}`, "POST");
  await settled(call, id, client);
  return { client, collectorId: id };
}

/** The collector is online, runs the published config, its rollout says current, and it has its own-metrics token. */
async function settled(call: ReturnType<typeof caller>, collectorId: string, client: SupervisorLikeClient): Promise<void> {
  await until(async () => {
    const status = await call<{ collectors: { id: string; state: string }[] }>("/publish/status");
    const collector = await call<{ status: string }>(`/collectors/${collectorId}`);
    return (
      client.config.includes("/var/log/supervised/") &&
      client.ownMetrics !== "" &&
      collector.status === "online" &&
      status.collectors.find((c) => c.id === collectorId)?.state === "current"
    );
  }, 15_000);
}

async function rotations(call: ReturnType<typeof caller>, collectorId: string): Promise<number> {
  const { items } = await call<{ items: { resourceId: string }[] }>("/audit?action=collector.metrics-token.rotate&limit=100");
  return items.filter((e) => e.resourceId === collectorId).length;
}

/** What the client holds before the restart must be exactly what it is offered after it. */
function expectUnchanged(client: SupervisorLikeClient, before: ReturnType<SupervisorLikeClient["seen"]>, from: number) {
  const after = client.seen(from);
  expect(before.tokens.size).toBe(1);
  expect(before.settingsHashes.size).toBe(1);
  // Re-offered or not, the offer is byte-identical: same token, same ConnectionSettingsOffers hash.
  for (const token of after.tokens) expect(token).toBe([...before.tokens][0]!);
  for (const hash of after.settingsHashes) expect(hash).toBe([...before.settingsHashes][0]!);
  // No config with another hash was pushed.
  for (const hash of after.configHashes) expect(hash).toBe(client.configHash);
  // One collector start for the own-metrics offer and one for the config, both before the restart.
  expect(client.collectorRestarts).toBe(2);
}

describe("an opamp-go-like supervisor across a server restart", () => {
  test("embedded store: same token, same connection settings, no config change, no rotation", async () => {
    const port = freePort();
    const statePath = `${tempDir()}/state.db`;
    const start = () =>
      startServer({
        port,
        statePath,
        env: { SVC_EXTERNALURL: `http://127.0.0.1:${port}`, SVC_BOOTSTRAP_ADMINTOKEN: ADMIN, SVC_LOGGING_LEVEL: "warn" },
      });
    let server = await start();
    const call = caller(server.base);
    const { client, collectorId } = await enrolled(call, [wsUrl(server)]);
    try {
      const before = client.seen();
      expect(await rotations(call, collectorId)).toBe(1); // the first offer minted it
      const mark = client.received.length;

      expect(await server.stop("SIGTERM")).toBe(0);
      server = await start();
      await until(async () => client.connects >= 2, 15_000);
      await settled(call, collectorId, client);
      // The redialled session has had its first exchange and whatever the server pushes after it.
      await until(async () => client.received.length > mark, 5000);
      await Bun.sleep(300);

      expectUnchanged(client, before, mark);
      expect(await rotations(call, collectorId)).toBe(1);
    } finally {
      client.stop();
      await server.stop("SIGKILL");
    }
  }, 60_000);

  test("two replicas on PostgreSQL: moving to the other replica changes nothing; a rotation on one reaches the other's session", async () => {
    const uri = await pg.create("restart");
    const key = randomBytes(32).toString("base64");
    const externalUrl = "http://127.0.0.1:1"; // one public URL for both, as behind a load balancer
    const replica = (port?: number) =>
      startServer({
        port,
        statePath: `${tempDir()}/state.db`,
        env: {
          SVC_STORAGE_BACKEND: "external",
          SVC_DATABASE_URI: uri,
          SVC_SECRETS_KEY: key,
          SVC_EXTERNALURL: externalUrl,
          SVC_BOOTSTRAP_ADMINTOKEN: ADMIN,
          SVC_LOGGING_LEVEL: "warn",
        },
      });
    let a = await replica();
    const b = await replica();
    const onA = caller(a.base);
    const onB = caller(b.base);
    const { client, collectorId } = await enrolled(onA, [wsUrl(a), wsUrl(b)]);
    try {
      expect(client.connectedTo).toBe(wsUrl(a));
      const before = client.seen();
      const mark = client.received.length;

      await a.stop("SIGKILL");
      await until(async () => client.connectedTo === wsUrl(b), 15_000);
      await settled(onB, collectorId, client);
      await until(async () => client.received.length > mark, 5000);
      await Bun.sleep(300);
      expectUnchanged(client, before, mark);
      expect(await rotations(onB, collectorId)).toBe(1);

      // On the restarted A: a rotation of the collector token offers the session on B nothing (the one after it
      // is the first message it gets); a rotation of the metrics credential reaches it, once.
      a = await replica(a.port);
      const onA = caller(a.base);
      const settings = client.received.length;
      await onA(`/collectors/${collectorId}/otlp-token`, "POST");
      const rotated = await onA<{ token: string }>(`/collectors/${collectorId}/metrics-token`, "POST");
      await until(async () => client.ownMetrics.includes(rotated.token), 10_000);
      expect(client.received.slice(settings).filter((m) => m.connectionSettings)).toHaveLength(1);
      expect(client.collectorRestarts).toBe(3);
      expect(await rotations(onB, collectorId)).toBe(2);
    } finally {
      client.stop();
    }
  }, 90_000);
});
