/**
 * Walks every route of the OpenAPI document: no credential → 401; a token
 * holding every scope but the route's → 403 naming it; the route's scope alone
 * → past auth. New routes are covered the moment they are declared. The few
 * public calls (log in, redeem a link, the session status) are named here, so a new one cannot
 * slip in unnoticed; session-only calls (GET/DELETE /session) still need a credential.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { SCOPES } from "../../server/auth/scopes.ts";
import { startTestServer, tokenWithScopes, type TestServer } from "../harness.ts";

let server: TestServer;
let all: { method: string; path: string; scope: string | undefined; security: unknown[] }[];
let operations: { method: string; path: string; scope: string }[];
beforeAll(async () => {
  server = await startTestServer();
  const doc = (await (await fetch(`${server.base}/api/v1/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { "x-required-scope"?: string; security: unknown[] }>>;
  };
  all = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ method: method.toUpperCase(), path, scope: op["x-required-scope"], security: op.security })),
  );
  operations = all.filter((o) => o.scope !== undefined) as typeof operations;
});
afterAll(() => server.stop());

const concrete = (path: string) => path.replaceAll(/\{\w+\}/g, "0190c3c0-0000-7000-8000-000000000000");

test("the document lists the foundation's routes, each with a known scope", () => {
  const names = operations.map((o) => `${o.method} ${o.path}`);
  for (const expected of [
    "POST /collectors",
    "GET /collectors",
    "GET /collectors/{id}",
    "PATCH /collectors/{id}",
    "DELETE /collectors/{id}",
    "GET /system/health",
    "GET /audit",
    "POST /service-accounts",
    "GET /service-accounts",
    "DELETE /service-accounts/{id}",
  ]) {
    expect(names).toContain(expected);
  }
  for (const op of operations) expect(SCOPES as readonly string[]).toContain(op.scope);
  const unscoped = all.filter((o) => o.scope === undefined);
  expect(
    unscoped
      .filter((o) => o.security.length === 0)
      .map((o) => `${o.method} ${o.path}`)
      .sort(),
  ).toEqual(["GET /session/status", "POST /session", "POST /session/invite", "POST /session/password-reset"]);
  expect(
    unscoped
      .filter((o) => o.security.length > 0)
      .map((o) => `${o.method} ${o.path}`)
      .sort(),
  ).toEqual(["DELETE /session", "GET /session"]);
  expect(operations.find((o) => o.method === "GET" && o.path === "/collectors")!.scope).toBe("collectors:read");
  expect(operations.find((o) => o.path === "/system/health")!.scope).toBe("health:read");
});

test("every route but the public ones refuses a missing credential with 401", async () => {
  for (const op of all.filter((o) => o.security.length > 0)) {
    const res = await server.api(concrete(op.path), { method: op.method, token: null });
    expect({ op, status: res.status }).toEqual({ op, status: 401 });
  }
});

test("every route refuses a token without its scope with 403, and admits one with only that scope", async () => {
  const allBut = new Map<string, string>();
  const only = new Map<string, string>();
  for (const scope of new Set(operations.map((o) => o.scope))) {
    allBut.set(
      scope,
      await tokenWithScopes(
        server,
        SCOPES.filter((s) => s !== scope),
      ),
    );
    only.set(scope, await tokenWithScopes(server, [scope]));
  }
  const stopped: string[] = [];
  for (const op of operations) {
    const denied = await server.api(concrete(op.path), { method: op.method, token: allBut.get(op.scope)! });
    expect({ op, status: denied.status }).toEqual({ op, status: 403 });
    expect(((await denied.json()) as { error: { message: string } }).error.message).toContain(op.scope);
    const json = op.method === "GET" || op.method === "DELETE" ? undefined : {};
    const admitted = await server.api(concrete(op.path), { method: op.method, token: only.get(op.scope)!, json });
    if (admitted.status === 401 || admitted.status === 403) stopped.push(`${op.method} ${op.path}: ${admitted.status}`);
  }
  expect(stopped).toEqual([]);
});

test("a denied call is in the audit log", async () => {
  const token = await tokenWithScopes(server, ["collectors:read"], "denied-one");
  await server.api("/audit", { token });
  const res = await server.api("/audit?action=auth.denied&actor=sa:denied-one");
  const { items } = (await res.json()) as { items: { outcome: string; resourceId: string }[] };
  expect(items[0]).toMatchObject({ outcome: "denied", resourceId: "GET /audit" });
});
