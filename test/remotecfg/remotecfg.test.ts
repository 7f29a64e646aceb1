/**
 * Runtime R remote config over the real server, in what Alloy's own client
 * (alloy-client.test.ts) does not send: connect-es on both codecs and with
 * gzip, plain curl (JSON codec), Basic auth, bodies that do not parse, a
 * FAILED report (a config Alloy's parser refuses is not one svc renders), an
 * effective config sent on every poll, and polls racing a token's revocation.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { EffectiveConfigSchema, GetConfigRequestSchema, RemoteConfigStatuses } from "../../server/gen/collector/v1/collector_pb.ts";
import { deploymentKit } from "../deployment.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { connectError, remoteConfigClient } from "./client.ts";

let server: TestServer;
let collectorId: string;
let otherId: string;
let token: string;

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

async function mint(id: string): Promise<string> {
  return (await call<{ token: string }>(`/collectors/${id}/otlp-token`, "POST")).token;
}

const client = (bearer: string, gzip = false) => remoteConfigClient(server.base, bearer, { gzip });

async function curl(args: string[]): Promise<{ status: number; body: string }> {
  const proc = Bun.spawn(["curl", "-sS", "-o", "-", "-w", "\n%{http_code}", ...args], { stdout: "pipe", stderr: "pipe" });
  const out = await new Response(proc.stdout).text();
  if ((await proc.exited) !== 0) throw new Error(`curl failed: ${await new Response(proc.stderr).text()}`);
  const cut = out.lastIndexOf("\n");
  return { status: Number(out.slice(cut + 1)), body: out.slice(0, cut) };
}

beforeAll(async () => {
  server = await startTestServer();
  const routeThrough = await deploymentKit(call);
  collectorId = (await call<{ id: string }>("/collectors", "POST", { name: "alloy-1", managementMode: "rcfg-remotecfg" })).id;
  otherId = (await call<{ id: string }>("/collectors", "POST", { name: "alloy-2", managementMode: "rcfg-remotecfg" })).id;
  await routeThrough(collectorId);
  await call("/commit", "POST", { message: "Onboard alloy-1" });
  token = await mint(collectorId);
});
afterAll(() => server.stop());

describe("before anything is published to it", () => {
  test('a hash from elsewhere gets empty content with hash "", not an error', async () => {
    const otherToken = await mint(otherId);
    const stale = await client(otherToken).getConfig({ id: otherId, hash: "abc" });
    expect(stale).toMatchObject({ content: "", hash: "", notModified: false });
  });
});

describe("published config", () => {
  beforeAll(async () => {
    await call("/publish", "POST");
  });

  test("gzip-compressed binary requests (served by the Connect router, not the poll fast path) answer the same", async () => {
    const plain = await client(token).getConfig({ id: collectorId });
    const zipped = await client(token, true).getConfig({ id: collectorId });
    expect(zipped).toMatchObject({ content: plain.content, hash: plain.hash, notModified: false });
    expect((await client(token, true).getConfig({ id: collectorId, hash: plain.hash })).notModified).toBe(true);
    const error = await connectError(client(token, true).getConfig({ id: otherId }));
    expect(error.code).toBe(Code.PermissionDenied);
  });

  test("a malformed binary body is invalid_argument", async () => {
    const res = await fetch(`${server.base}/collector.v1.CollectorService/GetConfig`, {
      method: "POST",
      headers: { "Content-Type": "application/proto", Authorization: `Bearer ${token}` },
      body: new Uint8Array([0x0a, 0xff, 0xff]),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: "invalid_argument" });
  });

  test("curl with the JSON codec fetches too", async () => {
    const { status, body } = await curl([
      "-X",
      "POST",
      `${server.base}/collector.v1.CollectorService/GetConfig`,
      "-H",
      "Content-Type: application/json",
      "-H",
      `Authorization: Bearer ${token}`,
      "--data",
      JSON.stringify({ id: collectorId }),
    ]);
    expect(status).toBe(200);
    const answer = JSON.parse(body) as { content: string; hash: string; notModified?: boolean };
    expect(answer.content).toContain("otelcol.exporter.otlphttp");
    expect(answer.hash).toMatch(/^[0-9a-f]{64}$/);

    const again = await curl([
      "-X",
      "POST",
      `${server.base}/collector.v1.CollectorService/GetConfig`,
      "-H",
      "Content-Type: application/json",
      "-H",
      `Authorization: Bearer ${token}`,
      "--data",
      JSON.stringify({ id: collectorId, hash: answer.hash }),
    ]);
    expect(JSON.parse(again.body)).toEqual({ hash: answer.hash, notModified: true });
  });

  test("Basic auth and no auth are unauthenticated (401) with a Connect error body", async () => {
    for (const auth of [["-u", `collector:${token}`], []]) {
      const { status, body } = await curl([
        "-X",
        "POST",
        `${server.base}/collector.v1.CollectorService/GetConfig`,
        "-H",
        "Content-Type: application/json",
        ...auth,
        "--data",
        JSON.stringify({ id: collectorId }),
      ]);
      expect(status).toBe(401);
      expect(JSON.parse(body)).toMatchObject({ code: "unauthenticated" });
    }
    const error = await connectError(client("svcct_" + "x".repeat(43)).getConfig({ id: collectorId }));
    expect(error.code).toBe(Code.Unauthenticated);
  });

  test("a token used with another collector's id is permission_denied (403)", async () => {
    const error = await connectError(client(token).getConfig({ id: otherId }));
    expect(error.code).toBe(Code.PermissionDenied);
    const res = await fetch(`${server.base}/collector.v1.CollectorService/GetConfig`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
      body: JSON.stringify({ id: otherId }),
    });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ code: "permission_denied" });
  });

  test("an unknown procedure is 404", async () => {
    const res = await fetch(`${server.base}/collector.v1.CollectorService/Nope`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
      body: "{}",
    });
    expect(res.status).toBe(404);
  });

  test("reporting APPLIED makes the rollout current; FAILED makes it failed and the collector degraded", async () => {
    const rcfg = client(token);
    const { hash } = await rcfg.getConfig({ id: collectorId });
    let status = await call<{ collectors: { id: string; state: string; error?: string }[] }>("/publish/status");
    expect(status.collectors.find((c) => c.id === collectorId)?.state).toBe("applying");

    await rcfg.getConfig({
      id: collectorId,
      hash,
      remoteConfigStatus: { status: RemoteConfigStatuses.RemoteConfigStatuses_FAILED, errorMessage: "bad component" },
    });
    status = await call("/publish/status");
    expect(status.collectors.find((c) => c.id === collectorId)).toEqual({ id: collectorId, state: "failed", error: "bad component" });
    expect(await call(`/collectors/${collectorId}`)).toMatchObject({ status: "degraded", health: { error: "bad component" } });

    const applied = await rcfg.getConfig({
      id: collectorId,
      hash,
      remoteConfigStatus: { status: RemoteConfigStatuses.RemoteConfigStatuses_APPLIED },
    });
    expect(applied.notModified).toBe(true);
    status = await call("/publish/status");
    expect(status.collectors.find((c) => c.id === collectorId)?.state).toBe("current");
    expect((status as unknown as { state: string }).state).toBe("completed");
    expect(await call(`/collectors/${collectorId}`)).toMatchObject({ status: "online", health: { error: null } });
  });

  test("an effective config is stored once, not on every poll", async () => {
    const rcfg = client(token);
    const body = new TextEncoder().encode('logging { level = "info" }\n');
    const effectiveConfig = create(EffectiveConfigSchema, { configMap: { configMap: { "": { body, contentType: "text/plain" } } } });
    await rcfg.getConfig({ id: collectorId, effectiveConfig });
    const first = await server.app.delivery.effective(collectorId);
    expect(first?.files).toEqual([{ name: "", contentType: "text/plain", body: 'logging { level = "info" }\n' }]);
    await Bun.sleep(5);
    await rcfg.getConfig({ id: collectorId, effectiveConfig });
    expect((await server.app.delivery.effective(collectorId))?.reportedAt).toBe(first!.reportedAt);
  });

  test("a Connect client on the JSON codec (the direct path too) gets what the binary one gets", async () => {
    const binary = await client(token).getConfig({ id: collectorId });
    const json = remoteConfigClient(server.base, token, { json: true });
    const first = await json.getConfig({ id: collectorId });
    expect(first).toMatchObject({ content: binary.content, hash: binary.hash, notModified: false });
    expect(await json.getConfig({ id: collectorId, hash: first.hash })).toMatchObject({ content: "", hash: first.hash, notModified: true });
    expect((await connectError(json.getConfig({ id: otherId }))).code).toBe(Code.PermissionDenied);
    expect((await connectError(json.getConfig({ id: "" }))).code).toBe(Code.InvalidArgument);
    expect((await connectError(remoteConfigClient(server.base, "svcct_" + "x".repeat(43), { json: true }).getConfig({ id: collectorId }))).code).toBe(
      Code.Unauthenticated,
    );
  });

  test("a token revoked while both codecs poll non-stop is refused from the next poll on; so is one whose collector is deleted", async () => {
    const { hash } = await client(token).getConfig({ id: collectorId });
    const old = token;
    let revoked = false;
    const outcomes: { afterRevocation: boolean; code: Code | "ok" }[] = [];
    const poller = async (json: boolean) => {
      const rcfg = remoteConfigClient(server.base, old, { json });
      while (outcomes.filter((o) => o.afterRevocation).length < 20) {
        const afterRevocation = revoked;
        const code = await rcfg.getConfig({ id: collectorId, hash }).then(
          () => "ok" as const,
          (error) => ConnectError.from(error).code,
        );
        outcomes.push({ afterRevocation, code });
      }
    };
    const polling = [poller(false), poller(true), poller(false), poller(true)];
    while (outcomes.filter((o) => o.code === "ok").length < 20) await Bun.sleep(5);
    token = await mint(collectorId);
    revoked = true;
    await Promise.all(polling);
    expect(outcomes.filter((o) => !o.afterRevocation && o.code === "ok").length).toBeGreaterThanOrEqual(20);
    expect(new Set(outcomes.filter((o) => o.afterRevocation).map((o) => o.code))).toEqual(new Set([Code.Unauthenticated]));
    expect((await client(token).getConfig({ id: collectorId, hash })).notModified).toBe(true);

    const doomed = (await call<{ id: string }>("/collectors", "POST", { name: "alloy-doomed", managementMode: "rcfg-remotecfg" })).id;
    const doomedToken = await mint(doomed);
    for (const json of [false, true]) await remoteConfigClient(server.base, doomedToken, { json }).getConfig({ id: doomed });
    await call(`/collectors/${doomed}`, "DELETE");
    for (const json of [false, true]) {
      expect((await connectError(remoteConfigClient(server.base, doomedToken, { json }).getConfig({ id: doomed }))).code).toBe(Code.Unauthenticated);
    }
  });

  test("forms the direct path leaves to the Connect router answer as Connect does: a wrong Content-Type, a charset, bodies that do not parse", async () => {
    const post = (contentType: string, body: string | Uint8Array) =>
      fetch(`${server.base}/collector.v1.CollectorService/GetConfig`, {
        method: "POST",
        headers: { "Content-Type": contentType, Authorization: `Bearer ${token}` },
        body,
      });
    expect((await post("text/plain", JSON.stringify({ id: collectorId }))).status).toBe(415);
    const charset = await post("application/json; charset=utf-8", JSON.stringify({ id: collectorId }));
    expect(charset.status).toBe(200);
    expect(((await charset.json()) as { content: string }).content).toContain("otelcol.exporter.otlphttp");
    for (const body of ["{", JSON.stringify({ id: collectorId, hash: 5 })]) {
      const res = await post("application/json", body);
      expect(res.status).toBe(400);
      expect(res.headers.get("content-type")).toBe("application/json");
      expect(await res.json()).toMatchObject({ code: "invalid_argument" });
    }
    // The direct path's answers carry the edge's headers, on both codecs.
    for (const [type, body] of [
      ["application/json", JSON.stringify({ id: collectorId })],
      ["application/proto", toBinary(GetConfigRequestSchema, create(GetConfigRequestSchema, { id: collectorId }))],
    ] as const) {
      const polled = await post(type, body);
      expect(polled.status).toBe(200);
      expect(polled.headers.get("content-type")).toBe(type);
      expect(polled.headers.get("x-content-type-options")).toBe("nosniff");
      expect(polled.headers.get("referrer-policy")).toBe("no-referrer");
      expect(polled.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
      const named = await fetch(`${server.base}/collector.v1.CollectorService/GetConfig`, {
        method: "POST",
        headers: { "Content-Type": type, Authorization: `Bearer ${token}`, "X-Request-Id": "poll-42" },
        body,
      });
      expect(named.headers.get("x-request-id")).toBe("poll-42");
    }
  });

  test("a plaintext request from a non-loopback peer is refused before the token is looked at", async () => {
    const channel = server.app.channels.find((c) => c.name === "remotecfg")!;
    const url = new URL(`${server.base}/collector.v1.CollectorService/GetConfig`);
    const req = new Request(url.href, { method: "POST", headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` }, body: "{}" });
    const ctx = { req, url, remoteAddr: "10.1.2.3", secure: false } as unknown as Parameters<typeof channel.handle>[0];
    const res = (await channel.handle(ctx))!;
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ code: "permission_denied" });
  });

  test("the channel reports up in health", () => {
    expect(server.app.channels.find((c) => c.name === "remotecfg")?.health()).toEqual({ state: "up" });
  });
});
