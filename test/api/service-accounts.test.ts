import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { hashToken } from "../../server/auth/tokens.ts";
import { startTestServer, tokenWithScopes, type TestServer } from "../harness.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

describe("service accounts", () => {
  test("create answers the token once; list never shows it; the store keeps only its digest", async () => {
    const res = await server.api("/service-accounts", { method: "POST", json: { name: "ci-bot", scopes: ["collectors:read", "collectors:write"] } });
    expect(res.status).toBe(201);
    const created = (await res.json()) as { id: string; token: string; scopes: string[] };
    expect(created.token).toMatch(/^svcsa_[0-9A-Za-z]{43}$/);
    expect(created.scopes).toEqual(["collectors:read", "collectors:write"]);
    const listed = await (await server.api("/service-accounts")).text();
    expect(listed).not.toContain(created.token);
    expect(listed).not.toContain(hashToken(created.token));
    expect(JSON.parse(listed).items.map((a: { name: string }) => a.name)).toEqual(expect.arrayContaining(["admin", "ci-bot"]));
    const stored = JSON.stringify(await server.app.store.list("service_accounts")) + JSON.stringify(await server.app.store.list("tokens"));
    expect(stored).not.toContain(created.token);
    expect((await server.api("/collectors", { token: created.token })).status).toBe(200);
  });

  test("tokens are random and distinct", async () => {
    const a = await tokenWithScopes(server, ["health:read"]);
    const b = await tokenWithScopes(server, ["health:read"]);
    expect(a).not.toBe(b);
  });

  test("names are unique; scopes must be known; unknown fields are refused", async () => {
    await tokenWithScopes(server, ["health:read"], "dup");
    const dup = await server.api("/service-accounts", { method: "POST", json: { name: "dup", scopes: ["health:read"] } });
    expect(dup.status).toBe(409);
    expect(((await dup.json()) as { error: { code: string } }).error.code).toBe("name_taken");
    const bad = await server.api("/service-accounts", { method: "POST", json: { name: "x", scopes: ["root:all"] } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { details: { path: string }[] } }).error.details[0]!.path).toBe("scopes[0]");
    expect((await server.api("/service-accounts", { method: "POST", json: { name: "x", scopes: [] } })).status).toBe(400);
    expect((await server.api("/service-accounts", { method: "POST", json: { name: "has space", scopes: ["health:read"] } })).status).toBe(400);
  });

  test("no one grants a scope they do not hold", async () => {
    const limited = await tokenWithScopes(server, ["users:admin", "collectors:read"]);
    const res = await server.api("/service-accounts", { method: "POST", token: limited, json: { name: "escalate", scopes: ["audit:read"] } });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain("audit:read");
    const ok = await server.api("/service-accounts", { method: "POST", token: limited, json: { name: "narrower", scopes: ["collectors:read"] } });
    expect(ok.status).toBe(201);
  });

  test("delete revokes at once and is audited", async () => {
    const res = await server.api("/service-accounts", { method: "POST", json: { name: "short-lived", scopes: ["collectors:read"] } });
    const { id, token } = (await res.json()) as { id: string; token: string };
    expect((await server.api("/collectors", { token })).status).toBe(200);
    expect((await server.api(`/service-accounts/${id}`, { method: "DELETE" })).status).toBe(204);
    expect((await server.api("/collectors", { token })).status).toBe(401);
    expect((await server.api(`/service-accounts/${id}`, { method: "DELETE" })).status).toBe(404);
    const audit = (await (await server.api("/audit?action=service_account.delete")).json()) as { items: { resourceId: string }[] };
    expect(audit.items.map((e) => e.resourceId)).toContain(id);
    const recreated = await server.api("/service-accounts", { method: "POST", json: { name: "short-lived", scopes: ["collectors:read"] } });
    expect(recreated.status).toBe(201);
  });

  test("bootstrap.adminToken makes the first admin with exactly that token, once", async () => {
    const token = "svcsa_" + "A1b2C3d4".repeat(5);
    const other = await startTestServer({ SVC_BOOTSTRAP_ADMINTOKEN: token });
    try {
      expect(other.adminToken).toBe(token);
      expect((await other.api("/system/health", { token })).status).toBe(200);
      expect(await other.app.accounts.bootstrapAdmin(token)).toBeNull();
    } finally {
      await other.stop();
    }
  });
});
