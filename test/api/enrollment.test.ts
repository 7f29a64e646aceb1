import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { parse } from "yaml";
import { ROLES } from "../../server/auth/scopes.ts";
import { hashToken } from "../../server/auth/tokens.ts";
import { AgentToServerSchema, ServerToAgentSchema } from "../../server/gen/opamp/v1/opamp_pb.ts";
import { startTestServer, tokenWithScopes, type TestServer } from "../harness.ts";
import { CAPS, description, uuidBytes } from "../opamp/helpers.ts";
import type { ErrorBody } from "../../server/http/schemas.ts";

let server: TestServer;
let bare: TestServer;
beforeAll(async () => {
  [server, bare] = await Promise.all([startTestServer({ SVC_EXTERNALURL: "https://svc.example.com/" }), startTestServer()]);
});
afterAll(async () => {
  await Promise.all([server.stop(), bare.stop()]);
});

async function ok<T>(res: Response | Promise<Response>, status = 200): Promise<T> {
  const answer = await res;
  const text = await answer.text();
  if (answer.status !== status) throw new Error(`expected ${status}, got ${answer.status}: ${text}`);
  return JSON.parse(text) as T;
}

async function refused(res: Response | Promise<Response>, status: number, code: string): Promise<ErrorBody["error"]> {
  const answer = await res;
  const { error } = (await answer.json()) as ErrorBody;
  expect({ status: answer.status, code: error?.code }).toEqual({ status, code });
  return error;
}

/** The minting calls are POSTs. */
const POST = { method: "POST" } as const;

async function collector(mode: "opamp" | "rcfg-remotecfg", name = `c-${mode}`): Promise<string> {
  return (await ok<{ id: string }>(server.api("/collectors", { method: "POST", json: { name, managementMode: mode } }), 201)).id;
}

describe("enrollment tokens API", () => {
  test("the token is in the create answer only; list shows its state; delete revokes", async () => {
    const created = await ok<{ id: string; token: string; kind: string; maxUses: number }>(
      server.api("/enrollment-tokens", { method: "POST", json: { kind: "agent", maxUses: 50, environment: "prod", expiresIn: 3600 } }),
      201,
    );
    expect(created.token).toMatch(/^svcen_/);
    expect(created).toMatchObject({ kind: "agent", maxUses: 50 });
    const listed = await (await server.api("/enrollment-tokens")).text();
    expect(listed).not.toContain(created.token);
    expect(listed).not.toContain(hashToken(created.token));
    const item = (JSON.parse(listed) as { items: { id: string }[] }).items.find((t) => t.id === created.id);
    expect(item).toMatchObject({ uses: 0, environment: "prod", revokedAt: null, createdBy: "sa:admin" });

    expect(await server.app.enrollment.redeemAgent(created.token)).toEqual({ tokenId: created.id, environment: "prod" });
    expect((await server.api(`/enrollment-tokens/${created.id}`, { method: "DELETE" })).status).toBe(204);
    expect(await server.app.enrollment.redeemAgent(created.token)).toBeNull();
    const after = await ok<{ items: { id: string; uses: number; revokedAt: string | null }[] }>(server.api("/enrollment-tokens"));
    expect(after.items.find((t) => t.id === created.id)).toMatchObject({ uses: 1, revokedAt: expect.any(String) });
    await refused(server.api("/enrollment-tokens/0190c3c0-0000-7000-8000-000000000000", { method: "DELETE" }), 404, "not_found");
    const audit = await ok<{ items: { action: string }[] }>(server.api(`/audit?action=enrollment.revoke`));
    expect(audit.items).toHaveLength(1);
  });

  test("bad bodies are 400 naming the field; an unknown collector is 404", async () => {
    const post = (json: unknown) => server.api("/enrollment-tokens", { method: "POST", json });
    expect((await refused(post({ kind: "opamp", maxUses: 5 }), 400, "validation_failed")).details.map((d) => d.path)).toEqual(["maxUses"]);
    expect((await refused(post({ kind: "ssh" }), 400, "validation_failed")).details[0]!.path).toBe("kind");
    expect((await refused(post({ kind: "agent", expiresIn: 400 * 86_400 }), 400, "validation_failed")).details[0]!.path).toBe("expiresIn");
    expect((await refused(post({ kind: "agent", maxUses: 0 }), 400, "validation_failed")).details[0]!.path).toBe("maxUses");
    await refused(post({ kind: "opamp", collectorId: "0190c3c0-0000-7000-8000-000000000000" }), 404, "not_found");
    const unlimited = await ok<{ maxUses: number | null }>(post({ kind: "agent", maxUses: null }), 201);
    expect(unlimited.maxUses).toBeNull();
  });
});

describe("collector tokens API", () => {
  test("otlp-token answers a new token and revokes the previous one at once", async () => {
    const id = await collector("rcfg-remotecfg", "rotating");
    const first = await ok<{ token: string; collectorId: string; createdAt: string }>(server.api(`/collectors/${id}/otlp-token`, { method: "POST" }), 201);
    expect(first).toEqual({ token: expect.stringMatching(/^svcct_/), collectorId: id, createdAt: expect.any(String) });
    expect(await server.app.collectorTokens.verify(first.token)).toBe(id);
    const second = await ok<{ token: string }>(server.api(`/collectors/${id}/otlp-token`, { method: "POST" }), 201);
    expect(await server.app.collectorTokens.verify(first.token)).toBeNull();
    expect(await server.app.collectorTokens.verify(second.token)).toBe(id);
    await refused(server.api("/collectors/0190c3c0-0000-7000-8000-000000000000/otlp-token", { method: "POST" }), 404, "not_found");
    const audit = await ok<{ items: { resourceId: string }[] }>(server.api("/audit?action=collector.token.rotate"));
    expect(audit.items.filter((e) => e.resourceId === id)).toHaveLength(2);
  });
});

describe("install snippet", () => {
  test("without externalUrl it is 409 external_url_missing saying how to set it, and mints nothing", async () => {
    const error = await refused(bare.api("/collectors/snippet", POST), 409, "external_url_missing");
    expect(error.message).toContain("SVC_EXTERNALURL");
    expect((await ok<{ items: unknown[] }>(bare.api("/enrollment-tokens"))).items).toEqual([]);
  });

  test("opamp (the default): a one-liner with a fresh single-use token", async () => {
    const answer = await ok<{ snippet: string; enrollmentTokenId: string; expiresAt: string }>(server.api("/collectors/snippet?environment=edge", POST), 201);
    const match =
      /^curl -fsSL https:\/\/svc\.example\.com\/downloads\/install\.sh \| sudo sh -s -- --endpoint https:\/\/svc\.example\.com --token (svcen_\w+) --mode opamp$/.exec(
        answer.snippet,
      );
    expect(match).not.toBeNull();
    const grant = await server.app.enrollment.redeemOpamp(match![1]!, "uid-snippet");
    expect(grant).toEqual({ tokenId: answer.enrollmentTokenId, collectorId: null, environment: "edge" });
    expect(await server.app.enrollment.redeemOpamp(match![1]!, "uid-other")).toBeNull();
    const listed = await ok<{ items: { id: string; expiresAt: string }[] }>(server.api("/enrollment-tokens"));
    expect(listed.items.find((t) => t.id === answer.enrollmentTokenId)!.expiresAt).toBe(answer.expiresAt);
  });

  test("rcfg-remotecfg needs the collector and carries its own token", async () => {
    const missing = await refused(server.api("/collectors/snippet?managementMode=rcfg-remotecfg", POST), 400, "validation_failed");
    expect(missing.details[0]!.path).toBe("collectorId");
    const id = await collector("rcfg-remotecfg");
    const answer = await ok<{ snippet: string; enrollmentTokenId: null; expiresAt: null }>(server.api(`/collectors/snippet?collectorId=${id}`, POST), 201);
    expect(answer).toMatchObject({ enrollmentTokenId: null, expiresAt: null });
    const token = /--token (svcct_\w+) --mode rcfg-remotecfg --collector-id ([\w-]+)$/.exec(answer.snippet);
    expect(token![2]).toBe(id);
    expect(await server.app.collectorTokens.verify(token![1]!)).toBe(id);
    await refused(server.api(`/collectors/snippet?collectorId=${id}&managementMode=opamp`, POST), 409, "management_mode_mismatch");
    expect((await refused(server.api(`/collectors/snippet?collectorId=${id}&environment=x`, POST), 400, "validation_failed")).details[0]!.path).toBe(
      "environment",
    );
    expect((await refused(server.api("/collectors/snippet?managementMode=ssh", POST), 400, "validation_failed")).details[0]!.path).toBe("managementMode");
  });

  test("?agent=true adds a single-use agent token in the collector's environment", async () => {
    const answer = await ok<{ snippet: string; agentEnrollmentTokenId: string }>(server.api("/collectors/snippet?environment=edge&agent=true", POST), 201);
    const match = /--agent-token (svcen_\w+) --token svcen_\w+ --mode opamp$/.exec(answer.snippet);
    expect(match).not.toBeNull();
    const listed = await ok<{ items: { id: string; kind: string; maxUses: number; environment: string }[] }>(server.api("/enrollment-tokens"));
    expect(listed.items.find((t) => t.id === answer.agentEnrollmentTokenId)).toMatchObject({ kind: "agent", maxUses: 1, environment: "edge" });
    expect(await server.app.enrollment.usableForAgent(match![1]!)).toEqual({ environment: "edge" });
    const plain = await ok<{ snippet: string; agentEnrollmentTokenId: null }>(server.api("/collectors/snippet", POST), 201);
    expect(plain.agentEnrollmentTokenId).toBeNull();
    expect(plain.snippet).not.toContain("--agent-token");
  });

  test("minting is a POST: GET /collectors/snippet still answers (behind the CSRF check for cookies); the other minting GETs are 405, minting nothing", async () => {
    const viaGet = await ok<{ snippet: string; enrollmentTokenId: string }>(server.api("/collectors/snippet?environment=legacy"));
    expect(viaGet.snippet).toContain("--mode opamp");
    const id = await collector("rcfg-remotecfg", "get-mints-nothing");
    const current = await ok<{ token: string }>(server.api(`/collectors/${id}/otlp-token`, POST), 201);
    const tokensBefore = (await ok<{ items: unknown[] }>(server.api("/enrollment-tokens"))).items;
    for (const path of [`/collectors/${id}/bootstrap?runtime=alloy`, "/agents/snippet"]) {
      const res = await server.api(path);
      expect(res.headers.get("allow")).toBe("POST");
      await refused(res, 405, "method_not_allowed");
    }
    expect(await server.app.collectorTokens.verify(current.token)).toBe(id);
    expect((await ok<{ items: unknown[] }>(server.api("/enrollment-tokens"))).items).toEqual(tokensBefore);
  });

  test("a plain-http externalUrl off loopback is refused", async () => {
    const lan = await startTestServer({ SVC_EXTERNALURL: "http://10.1.2.3:8080" });
    try {
      await refused(lan.api("/collectors/snippet", POST), 409, "external_url_insecure");
    } finally {
      await lan.stop();
    }
  });

  test("minting credentials needs a write scope: a viewer is refused", async () => {
    const viewer = await tokenWithScopes(server, ROLES.viewer);
    await refused(server.api("/collectors/snippet", { method: "POST", token: viewer }), 403, "forbidden");
    await refused(server.api("/enrollment-tokens", { method: "POST", token: viewer, json: { kind: "opamp" } }), 403, "forbidden");
    expect((await server.api("/enrollment-tokens", { token: viewer })).status).toBe(200);
  });
});

describe("bootstrap files", () => {
  interface Bootstrap {
    runtime: string;
    files: { path: string; contentType: string; body: string }[];
  }

  test("otelcol: collector and supervisor configs with a single-use token bound to this collector", async () => {
    const id = await collector("opamp", "boot-o");
    const answer = await ok<Bootstrap>(server.api(`/collectors/${id}/bootstrap?runtime=otelcol`, POST), 201);
    expect(answer.runtime).toBe("otelcol");
    const [config, supervisor] = answer.files.map((f) => parse(f.body));
    expect(config.extensions.opamp.server.ws.endpoint).toBe("wss://svc.example.com/v1/opamp");
    expect(Object.keys(config.extensions.opamp.capabilities).sort()).toEqual(["reports_effective_config", "reports_health"]);
    expect(config.service.extensions).toEqual(["opamp"]);
    expect(supervisor.server.endpoint).toBe("wss://svc.example.com/v1/opamp");
    expect(supervisor.server.headers.Authorization).toBe(config.extensions.opamp.server.ws.headers.Authorization);
    const token = (config.extensions.opamp.server.ws.headers.Authorization as string).replace(/^Bearer /, "");
    expect(await server.app.enrollment.redeemOpamp(token, "uid-boot")).toMatchObject({ collectorId: id });
    const defaulted = await ok<Bootstrap>(server.api(`/collectors/${id}/bootstrap`, POST), 201);
    expect(defaulted.runtime).toBe("otelcol");
  });

  test("alloy: remotecfg and own-metrics push with a fresh collector token that replaces the old one", async () => {
    const id = await collector("rcfg-remotecfg", "boot-r");
    const old = await ok<{ token: string }>(server.api(`/collectors/${id}/otlp-token`, { method: "POST" }), 201);
    const answer = await ok<Bootstrap>(server.api(`/collectors/${id}/bootstrap?runtime=alloy`, POST), 201);
    expect(answer.runtime).toBe("alloy");
    expect(answer.files.map((f) => f.path)).toEqual(["/etc/rcfg-runtime/config.rcfg"]);
    const body = answer.files[0]!.body;
    expect(body).toContain('url            = "https://svc.example.com"');
    expect(body).toContain(`id             = "${id}"`);
    const token = /bearer_token += "(svcct_\w+)"/.exec(body)![1]!;
    expect(body).toContain(`"Authorization" = "Bearer ${token}"`);
    expect(await server.app.collectorTokens.verify(token)).toBe(id);
    expect(await server.app.collectorTokens.verify(old.token)).toBeNull();
  });

  test("a runtime that does not match the collector's mode is 409; unknown collector 404; no externalUrl 409", async () => {
    const id = await collector("opamp", "boot-mismatch");
    const error = await refused(server.api(`/collectors/${id}/bootstrap?runtime=alloy`, POST), 409, "management_mode_mismatch");
    expect(error.message).toContain("PATCH");
    await refused(server.api("/collectors/0190c3c0-0000-7000-8000-000000000000/bootstrap", POST), 404, "not_found");
    await refused(bare.api("/collectors/0190c3c0-0000-7000-8000-000000000000/bootstrap", POST), 409, "external_url_missing");
  });
});

describe("an OpAMP enrollment token and a known instance", () => {
  /** One OpAMP over HTTP exchange for `uid` with `token`; answers the status and, when 200, the decoded reply. */
  async function opamp(token: string, uid: Uint8Array) {
    const message = create(AgentToServerSchema, {
      instanceUid: uid,
      sequenceNum: 1n,
      capabilities: CAPS,
      agentDescription: description({ "service.name": "otelcol-contrib", "host.name": "victim" }),
    });
    const res = await fetch(`${server.base}/v1/opamp`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/x-protobuf" },
      body: toBinary(AgentToServerSchema, message) as Uint8Array<ArrayBuffer>,
    });
    const bytes = new Uint8Array(await res.arrayBuffer());
    return { status: res.status, reply: res.status === 200 ? fromBinary(ServerToAgentSchema, bytes) : null, text: new TextDecoder().decode(bytes) };
  }

  test("a bound token outlives its expiry, not its collector: once the collector it enrolled is deleted, its instance is refused (401) and no collector is made", async () => {
    const uid = uuidBytes();
    const { token } = await ok<{ token: string }>(server.api("/enrollment-tokens", { method: "POST", json: { kind: "opamp" } }), 201);
    expect((await opamp(token, uid)).status).toBe(200);
    const collectorId = (await server.app.store.get<{ collectorId: string }>("opamp_instances", Buffer.from(uid).toString("hex")))!.data.collectorId;
    expect((await server.api(`/collectors/${collectorId}`, { method: "DELETE" })).status).toBe(204);
    const before = await ok<{ items: { id: string }[] }>(server.api("/collectors?limit=500"));
    const again = await opamp(token, uid);
    expect(again.status).toBe(401);
    expect(JSON.parse(again.text).error.message).toContain("was deleted");
    expect(await ok<{ items: { id: string }[] }>(server.api("/collectors?limit=500"))).toEqual(before);
  });

  test("an unbound token presenting a known instance_uid is refused (403), and nothing it could use is answered or changed", async () => {
    const uid = uuidBytes();
    const hex = Buffer.from(uid).toString("hex");
    const first = await ok<{ token: string }>(server.api("/enrollment-tokens", { method: "POST", json: { kind: "opamp" } }), 201);
    expect((await opamp(first.token, uid)).status).toBe(200);
    const victim = (await server.app.store.get<{ collectorId: string }>("opamp_instances", hex))!.data.collectorId;
    const victimToken = await ok<{ token: string }>(server.api(`/collectors/${victim}/otlp-token`, { method: "POST" }), 201);

    // The attacker holds a fresh unbound token and the victim's uid (uids are not secrets).
    const attacker = await ok<{ id: string; token: string }>(server.api("/enrollment-tokens", { method: "POST", json: { kind: "opamp" } }), 201);
    const tokensBefore = await ok<{ items: unknown[] }>(server.api("/enrollment-tokens"));
    const instanceBefore = await server.app.store.get("opamp_instances", hex);
    const collectorsBefore = await ok<{ items: { id: string }[] }>(server.api("/collectors?limit=500"));
    const hijack = await opamp(attacker.token, uid);
    expect(hijack.status).toBe(403);
    expect(JSON.parse(hijack.text).error.code).toBe("permission_denied");
    expect(hijack.text).not.toContain(victimToken.token);
    expect(await ok(server.api("/enrollment-tokens"))).toEqual(tokensBefore);
    expect(await server.app.store.get("opamp_instances", hex)).toEqual(instanceBefore);
    expect(await ok(server.api("/collectors?limit=500"))).toEqual(collectorsBefore);
    expect(await server.app.collectorTokens.verify(victimToken.token)).toBe(victim);

    // The operator's way to re-enroll that collector: a token made for it.
    const forVictim = await ok<{ token: string }>(server.api("/enrollment-tokens", { method: "POST", json: { kind: "opamp", collectorId: victim } }), 201);
    expect((await opamp(forVictim.token, uid)).status).toBe(200);
    expect((await server.app.store.get<{ collectorId: string }>("opamp_instances", hex))!.data.collectorId).toBe(victim);
    // And the first token still reconnects its own instance.
    expect((await opamp(first.token, uid)).status).toBe(200);
  });

  test("instance_uids are listed only to holders of tokens:write", async () => {
    const created = await ok<{ id: string; token: string }>(server.api("/enrollment-tokens", { method: "POST", json: { kind: "opamp" } }), 201);
    const uid = uuidBytes();
    expect((await opamp(created.token, uid)).status).toBe(200);
    const hex = Buffer.from(uid).toString("hex");
    type Listed = { items: { id: string; uses: number; boundInstanceUid: string | null }[] };
    const viewer = await tokenWithScopes(server, ROLES.viewer);
    const seen = await ok<Listed>(server.api("/enrollment-tokens", { token: viewer }));
    expect(seen.items.find((t) => t.id === created.id)).toMatchObject({ uses: 1, boundInstanceUid: null });
    expect(JSON.stringify(seen)).not.toContain(hex);
    const admin = await ok<Listed>(server.api("/enrollment-tokens"));
    expect(admin.items.find((t) => t.id === created.id)).toMatchObject({ uses: 1, boundInstanceUid: hex });
  });
});
