/**
 * Runtime R against Alloy's own remote-config client (test/remotecfg/alloy.ts:
 * Alloy v1.18.1's remotecfg service on grafana/alloy-remote-config and
 * connect-go), configured by the bootstrap file svc writes: it starts,
 * registers and polls as Alloy does, loads what it is sent with Alloy's
 * parser, reports APPLIED and its effective config, gets not_modified for an
 * unchanged hash and the new config after a publish; a missing, rotated or
 * foreign token is refused as Alloy expects. Alloy also reports a fetch that
 * failed (a rotated token, a server it could not reach) as FAILED for the
 * config it runs, on its next poll that gets through: svc takes that for no
 * verdict on the config, so a staged rollout goes on.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { deploymentKit } from "../deployment.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { until } from "../opamp/helpers.ts";
import type { ConfigReport } from "../../server/rollout/records.ts";
import { freePort } from "../process/spawn.ts";
import { AlloyClient, effectiveBody, type AlloyCall } from "./alloy.ts";

let server: TestServer;
let routeThrough: (collectorId: string, include?: string) => Promise<void>;
const clients: AlloyClient[] = [];
/** Every config report svc took (Delivery.report, as the channel calls it), by collector. */
const taken: { collectorId: string; report: ConfigReport }[] = [];

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

interface Collector {
  status: string;
  reported: Record<string, string>;
  health: { channel: string; intervalSeconds: number; error: string | null };
}
interface PublishStatus {
  state: string;
  collectors: { id: string; state: string; error?: string }[];
}
interface RolloutStatus {
  state: string;
  pausedReason?: string | null;
  batches: { released: boolean; counts: Record<string, number> }[];
}
interface HistoryEntry {
  seq: number;
  hash: string;
  state: string;
  error?: string;
}

/** A new Runtime R collector routed through the deployment kit, and its own token. */
async function collector(name: string): Promise<{ id: string; token: string }> {
  const { id } = await call<{ id: string }>("/collectors", "POST", { name, managementMode: "rcfg-remotecfg" });
  await routeThrough(id);
  return { id, token: await mint(id) };
}

/** Activates the deployment kit's source on the collector again, reading `include`. */
async function activate(id: string, include: string): Promise<void> {
  const source = (await call<{ items: { id: string }[] }>("/sources")).items[0]!;
  await call(`/collectors/${id}/sources`, "POST", { sourceId: source.id, configOverrides: { include: [include] } });
}

async function mint(id: string): Promise<string> {
  return (await call<{ token: string }>(`/collectors/${id}/otlp-token`, "POST")).token;
}

/** The Runtime R bootstrap file svc writes for the holder of `token`. */
async function bootstrap(token: string): Promise<string> {
  const { runtime, files } = await call<{ runtime: string; files: { path: string; body: string }[] }>("/bootstrap-files", "POST", { token });
  expect(runtime).toBe("alloy");
  return files[0]!.body;
}

function alloy(file: string): AlloyClient {
  const client = new AlloyClient(file);
  clients.push(client);
  return client;
}

const sha256 = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest("hex");
const methods = (calls: AlloyCall[]) => calls.map((c) => `${c.method} ${c.error?.code ?? "ok"}`);
const stateOf = async (id: string) => (await call<PublishStatus>("/publish/status")).collectors.find((c) => c.id === id);
const history = async (id: string) => (await call<{ items: HistoryEntry[] }>(`/collectors/${id}/config-history`)).items;

beforeAll(async () => {
  // The bootstrap file's url is externalUrl: a known loopback port.
  const port = freePort();
  server = await startTestServer({ SVC_LISTEN: `127.0.0.1:${port}`, SVC_EXTERNALURL: `http://127.0.0.1:${port}` });
  routeThrough = await deploymentKit(call);
  const report = server.app.delivery.report.bind(server.app.delivery);
  server.app.delivery.report = (collectorId, r) => (taken.push({ collectorId, report: r }), report(collectorId, r));
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await server.stop();
});

describe("Alloy's client through a collector's life", () => {
  let a: { id: string; token: string };
  let client: AlloyClient;
  let first: string;

  beforeAll(async () => {
    a = await collector("alloy-a");
    await call("/commit", "POST", { message: "Onboard alloy-a" });
    client = alloy(await bootstrap(a.token));
  });

  test("it starts as Alloy does: registers, polls with no hash and, before any publish, gets not_modified", async () => {
    const start = await client.step("start");
    expect(start.error).toBeUndefined();
    expect(methods(start.calls)).toEqual(["RegisterCollector ok", "GetConfig ok", "RegisterCollector ok"]);
    const [register, poll] = start.calls;
    expect(register!.request).toMatchObject({ id: a.id, localAttributes: { "collector.os": "linux", "collector.version": "v1.18.1" } });
    expect(poll!.request).toMatchObject({ id: a.id, hash: "", remoteConfigStatus: { status: "RemoteConfigStatuses_UNSET" }, effectiveConfig: null });
    expect(poll!.response).toMatchObject({ hash: "", notModified: true });
    expect(start).toMatchObject({ status: "RemoteConfigStatuses_UNSET", running: "" });
    expect(await call<Collector>(`/collectors/${a.id}`)).toMatchObject({
      status: "online",
      reported: { "collector.os": "linux", "collector.version": "v1.18.1" },
      health: { channel: "remotecfg", intervalSeconds: 60, error: null },
    });
  });

  test("a publish reaches it at its next poll: it loads the config, and its next call reports APPLIED with that config as effective", async () => {
    await call("/publish", "POST");
    const poll = await client.step("poll");
    expect(methods(poll.calls)).toEqual(["GetConfig ok", "GetConfig ok"]);
    const [fetched, notified] = poll.calls;
    first = fetched!.response!.content!;
    expect(first).toContain("otelcol.exporter.otlphttp");
    expect(fetched!.response!.hash).toBe(sha256(first));
    expect(notified!.request).toMatchObject({ hash: sha256(first), remoteConfigStatus: { status: "RemoteConfigStatuses_APPLIED", errorMessage: "" } });
    expect(effectiveBody(notified!)).toBe(first);
    expect(notified!.response).toMatchObject({ notModified: true });
    expect(poll).toMatchObject({ status: "RemoteConfigStatuses_APPLIED", running: first, remoteHash: sha256(first) });

    expect(await stateOf(a.id)).toEqual({ id: a.id, state: "current" });
    const effective = await server.app.delivery.effective(a.id);
    expect(effective?.files).toEqual([{ name: "", contentType: "text/plain", body: first }]);
    expect(JSON.stringify(effective)).not.toContain("svcct_");
  });

  test("an unchanged config is not_modified: one call, no status and no effective config sent again", async () => {
    const poll = await client.step("poll");
    expect(methods(poll.calls)).toEqual(["GetConfig ok"]);
    expect(poll.calls[0]!.request).toMatchObject({ hash: sha256(first), remoteConfigStatus: null, effectiveConfig: null });
    expect(poll.calls[0]!.response).toMatchObject({ content: "", hash: sha256(first), notModified: true });
    expect(poll).toMatchObject({ status: "RemoteConfigStatuses_APPLIED", running: first });
  });

  test("a new publish is the new config at the next poll: loaded, and current though Alloy sends no status for it", async () => {
    await activate(a.id, "/srv/app/*.log");
    await call("/commit", "POST", { message: "Read /srv/app" });
    await call("/publish", "POST");
    const poll = await client.step("poll");
    expect(methods(poll.calls)).toEqual(["GetConfig ok", "GetConfig ok"]);
    const second = poll.calls[0]!.response!.content!;
    expect(second).toContain("/srv/app/*.log");
    expect(poll.calls[0]!.request.hash).toBe(sha256(first));
    // Its status is APPLIED still, so Alloy does not send it again: the new hash and effective config say it.
    expect(poll.calls[1]!.request).toMatchObject({ hash: sha256(second), remoteConfigStatus: null });
    expect(effectiveBody(poll.calls[1]!)).toBe(second);
    expect(poll.running).toBe(second);
    expect(await stateOf(a.id)).toEqual({ id: a.id, state: "current" });
    expect((await history(a.id)).at(-1)).toMatchObject({ hash: sha256(second), state: "current" });
  });

  test("a name and attributes added to its file reach svc with the reload's RegisterCollector", async () => {
    const file = (await bootstrap(a.token)).replace(
      'poll_frequency = "1m"',
      'poll_frequency = "1m"\n\tname           = "alloy-host-1"\n\tattributes     = {"team" = "blue"}',
    );
    client.rewrite(file);
    const reload = await client.step("reload");
    expect(reload.error).toBeUndefined();
    expect(methods(reload.calls)).toEqual(["RegisterCollector ok", "GetConfig ok"]);
    expect(reload.calls[0]!.request).toMatchObject({ name: "alloy-host-1", localAttributes: { team: "blue", "collector.os": "linux" } });
    const channel = server.app.channels.find((c) => c.name === "remotecfg") as unknown as {
      service: { registration(id: string): Promise<{ name: string; attributes: Record<string, string> } | null> };
    };
    expect(await channel.service.registration(a.id)).toMatchObject({ name: "alloy-host-1", attributes: { team: "blue", "collector.version": "v1.18.1" } });
    expect((await call<Collector>(`/collectors/${a.id}`)).reported).toMatchObject({ team: "blue" });
  });

  test("a rotated token: its polls are unauthenticated and it keeps running its config; with the new token in its file a reload carries on, and svc records no failure", async () => {
    const { hash } = (await history(a.id)).at(-1)!;
    const rotated = await mint(a.id);
    const refused = await client.step("poll");
    expect(methods(refused.calls)).toEqual(["GetConfig unauthenticated", "GetConfig unauthenticated"]);
    expect(refused.calls[0]!.error!.message).toBe("unauthenticated: the Bearer token is not a live collector token (unknown, rotated or revoked)");
    expect(refused).toMatchObject({ status: "RemoteConfigStatuses_FAILED", remoteHash: hash });

    client.rewrite(
      (await bootstrap(rotated)).replace(
        'poll_frequency = "1m"',
        'poll_frequency = "1m"\n\tname           = "alloy-host-1"\n\tattributes     = {"team" = "blue"}',
      ),
    );
    const reload = await client.step("reload");
    expect(methods(reload.calls)).toEqual(["RegisterCollector ok", "GetConfig ok", "GetConfig ok"]);
    // Alloy tells of its failed fetch with the hash of the config it runs, then that the config is applied.
    expect(reload.calls[1]!.request).toMatchObject({
      hash,
      remoteConfigStatus: { status: "RemoteConfigStatuses_FAILED", errorMessage: refused.errorMessage },
    });
    expect(reload.calls[2]!.request).toMatchObject({ hash, remoteConfigStatus: { status: "RemoteConfigStatuses_APPLIED" } });
    expect(reload.status).toBe("RemoteConfigStatuses_APPLIED");
    expect(await stateOf(a.id)).toEqual({ id: a.id, state: "current" });
    expect(taken.filter((t) => t.collectorId === a.id && t.report.state === "failed")).toEqual([]);
    expect((await history(a.id)).filter((e) => e.state === "failed")).toEqual([]);
    expect((await call<Collector>(`/collectors/${a.id}`)).health.error).toBeNull();
  });

  test("stopping unregisters it: offline at once", async () => {
    const stop = await client.step("stop");
    expect(methods(stop.calls)).toEqual(["UnregisterCollector ok"]);
    expect((await call<Collector>(`/collectors/${a.id}`)).status).toBe("offline");
  });
});

describe("what Alloy cannot start with", () => {
  test("no token in its file: RegisterCollector is unauthenticated and the initial load fails", async () => {
    const b = await collector("alloy-no-token");
    const file = (await bootstrap(b.token)).replace(/^\s*bearer_token\s*=.*\n/m, "");
    expect(file).not.toContain("bearer_token");
    const start = await alloy(file).step("start");
    expect(methods(start.calls)).toEqual(["RegisterCollector unauthenticated"]);
    expect(start.error).toBe(
      "could not perform the initial load successfully: unauthenticated: a collector Bearer token is required (Authorization: Bearer svcct_…)",
    );
    expect((await call<Collector>(`/collectors/${b.id}`)).status).not.toBe("online");
  });

  test("another collector's id with its own token: permission_denied", async () => {
    const c = await collector("alloy-c");
    const d = await collector("alloy-d");
    const file = (await bootstrap(c.token)).replace(JSON.stringify(c.id), JSON.stringify(d.id));
    const start = await alloy(file).step("start");
    expect(methods(start.calls)).toEqual(["RegisterCollector permission_denied"]);
    expect(start.error).toBe(`could not perform the initial load successfully: permission_denied: this token belongs to another collector than ${d.id}`);
  });
});

describe("a fetch that failed is no verdict on the config", () => {
  test("a staged rollout goes on when its canary, after a server it could not reach, reports FAILED for the config it applied", async () => {
    const canary = await collector("alloy-canary");
    const rest = await collector("alloy-rest");
    await call("/commit", "POST", { message: "Onboard the canary" });
    const canaryClient = alloy(await bootstrap(canary.token));
    expect((await canaryClient.step("start")).error).toBeUndefined();
    await call("/publish", "POST");
    await canaryClient.step("poll");
    expect(await stateOf(canary.id)).toEqual({ id: canary.id, state: "current" });

    // A staged rollout: the canary first, then a long pause before the next batch.
    for (const id of [canary.id, rest.id]) await activate(id, "/srv/staged/*.log");
    await call("/commit", "POST", { message: "Read /srv/staged" });
    const rollout = await call<{ id: string }>("/publish", "POST", { strategy: { batchSize: 1, pauseSeconds: 3600, canary: { collectorIds: [canary.id] } } });
    const applied = await canaryClient.step("poll");
    expect(applied.running).toContain("/srv/staged/*.log");
    await until(async () => (await call<RolloutStatus>(`/rollouts/${rollout.id}`)).batches[0]!.counts.current === 1, 30_000, 50, "the canary current");

    // The server is out of reach (its url points at a closed port): Alloy's fetches fail.
    const file = await bootstrap(canary.token);
    canaryClient.rewrite(file.replaceAll(server.base, `http://127.0.0.1:${freePort()}`));
    const unreachable = await canaryClient.step("reload");
    expect(methods(unreachable.calls)).toEqual(["RegisterCollector unavailable"]);
    const failed = await canaryClient.step("poll");
    expect(failed.status).toBe("RemoteConfigStatuses_FAILED");
    expect(failed.errorMessage).toStartWith("unavailable: ");

    // Back in reach: the first poll that gets through reports that FAILED, for the config it runs.
    canaryClient.rewrite(file);
    const back = await canaryClient.step("reload");
    expect(methods(back.calls)).toEqual(["RegisterCollector ok", "GetConfig ok", "GetConfig ok"]);
    expect(back.calls[1]!.request).toMatchObject({
      hash: applied.remoteHash,
      remoteConfigStatus: { status: "RemoteConfigStatuses_FAILED", errorMessage: failed.errorMessage },
    });
    expect(back.status).toBe("RemoteConfigStatuses_APPLIED");

    const status = await call<RolloutStatus>(`/rollouts/${rollout.id}`);
    expect({ state: status.state, pausedReason: status.pausedReason ?? null }).toEqual({ state: "running", pausedReason: null });
    expect(await stateOf(canary.id)).toEqual({ id: canary.id, state: "current" });
    expect(taken.filter((t) => t.collectorId === canary.id && t.report.state === "failed")).toEqual([]);
    expect((await history(canary.id)).filter((e) => e.state === "failed")).toEqual([]);
    expect((await call<Collector>(`/collectors/${canary.id}`)).health.error).toBeNull();
    await call(`/rollouts/${rollout.id}/abort`, "POST", {});
  }, 60_000);
});
