/**
 * Issue 26 finding 15: the auth matrix and the route walk read each route's
 * scope from the server's own OpenAPI document, so they prove the scope is
 * enforced, not that it is the right one. access-policy.json is the policy
 * written down: route → scope and role → scopes. The live document, the
 * scopes the server answers and ROLES must equal it exactly, so lowering
 * `POST /publish` to `config:read`, or giving viewers `config:publish`,
 * fails here until the table is changed too.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ROLES, SCOPES } from "../../server/auth/scopes.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import policy from "./access-policy.json" with { type: "json" };

interface Operation {
  "x-required-scope"?: string;
  security: Record<string, string[]>[];
}

let server: TestServer;
let live: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  const doc = (await (await fetch(`${server.base}/api/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, Operation>> };
  live = {};
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const scope = op["x-required-scope"];
      // The security requirement is what clients read: it must say the same as x-required-scope.
      const expected: Record<string, string[]>[] =
        scope !== undefined ? [{ bearer: [scope] }, { session: [scope] }] : op.security.length === 0 ? [] : [{ session: [] }];
      expect({ route: `${method} ${path}`, security: op.security }).toEqual({ route: `${method} ${path}`, security: expected });
      live[`${method.toUpperCase()} ${path}`] = scope ?? (op.security.length === 0 ? "public" : "session");
    }
  }
});
afterAll(() => server.stop());

const sorted = (roles: Record<string, readonly string[]>) => Object.fromEntries(Object.entries(roles).map(([role, scopes]) => [role, [...scopes].sort()]));

test("every route of the live OpenAPI document needs exactly the scope the policy table names, and no route is missing or extra", () => {
  expect(live).toEqual(policy.routes);
});

test("each role holds exactly the scopes the policy table names, in ROLES and in what GET /scopes answers", async () => {
  expect(sorted(ROLES)).toEqual(sorted(policy.roles));
  const answered = (await (await server.api("/scopes")).json()) as { items: string[]; roles: Record<string, string[]> };
  expect(sorted(answered.roles)).toEqual(sorted(policy.roles));
  // Every scope is reachable by a role, and admin holds them all.
  expect([...answered.items].sort()).toEqual([...SCOPES].sort());
  expect([...policy.roles.admin].sort()).toEqual([...SCOPES].sort());
});

test("the table is internally sound: every route's scope exists, and a viewer reaches only :read scopes", () => {
  const known = new Set<string>([...SCOPES, "public", "session"]);
  expect(Object.entries(policy.routes).filter(([, scope]) => !known.has(scope))).toEqual([]);
  expect(policy.roles.viewer.filter((scope) => !scope.endsWith(":read"))).toEqual([]);
  expect(policy.roles.editor).not.toContain("users:admin");
});
