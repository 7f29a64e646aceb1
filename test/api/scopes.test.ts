/** GET /scopes: the grantable scopes and the roles' scope sets, for the service-account form; admins only. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ROLES, SCOPES } from "../../server/auth/scopes.ts";
import { startTestServer, tokenWithScopes, type TestServer } from "../harness.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

test("answers every scope in order and the roles", async () => {
  const answer = await server.call<{ items: string[]; roles: Record<string, string[]> }>("/scopes");
  expect(answer.items).toEqual([...SCOPES]);
  expect(answer.roles).toEqual(ROLES);
});

test("needs users:admin", async () => {
  const token = await tokenWithScopes(
    server,
    SCOPES.filter((s) => s !== "users:admin"),
  );
  const res = await server.api("/scopes", { token });
  expect(res.status).toBe(403);
});
