/**
 * Issue 26 finding 4: `users:admin` must not reach scopes its holder lacks
 * through the user set. A service account holding only `users:admin` used to
 * invite an admin (then redeem the link and mint any scope) and reset the
 * bootstrap admin's password. Every grant or act on a user (invite, role
 * change, reset, disable, delete) and on a service account (create, delete) is
 * now held to the caller's own scopes; each refusal leaves the store as it was.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ROLES } from "../../server/auth/scopes.ts";
import { startTestServer, tokenWithScopes, type TestServer } from "../harness.ts";

let server: TestServer;
let adminUserId: string;
let viewerId: string;
let editorId: string;
/** Only `users:admin`: the red team's credential. */
let usersAdminOnly: string;

beforeAll(async () => {
  server = await startTestServer({ SVC_EXTERNALURL: "https://svc.example.com" });
  await server.uiAdmin();
  const { items } = await server.call<{ items: { id: string; username: string }[] }>("/users");
  adminUserId = items.find((u) => u.username === "admin")!.id;
  viewerId = (await server.call<{ user: { id: string } }>("/users", "POST", { username: "vic", email: "vic@example.com", role: "viewer" })).user.id;
  editorId = (await server.call<{ user: { id: string } }>("/users", "POST", { username: "eddie", email: "eddie@example.com", role: "editor" })).user.id;
  usersAdminOnly = await tokenWithScopes(server, ["users:admin"], "ua-only");
});
afterAll(() => server.stop());

/** Every stored document the user and account sets consist of, with versions. */
async function snapshot(): Promise<unknown> {
  const out: Record<string, unknown> = {};
  for (const collection of ["users", "user_names", "user_links", "sessions", "service_accounts", "tokens"]) {
    out[collection] = (await server.app.store.list(collection)).map(({ id, version, data }) => ({ id, version, data }));
  }
  return out;
}

async function refused(res: Response, missing: string): Promise<void> {
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect([res.status, body.error.code]).toEqual([403, "forbidden"]);
  expect(body.error.message).toContain(`'${missing}'`);
}

describe("users:admin alone escalates to nothing", () => {
  test("it cannot invite an admin (nor any role holding scopes it lacks); nothing is created or mailed", async () => {
    const before = await snapshot();
    for (const role of ["admin", "editor", "viewer"]) {
      const res = await server.api("/users", { method: "POST", token: usersAdminOnly, json: { username: `mallory-${role}`, email: "m@example.com", role } });
      await refused(res, ROLES[role as keyof typeof ROLES].find((s) => s !== "users:admin")!);
    }
    expect(await snapshot()).toEqual(before);
  });

  test("it cannot reset, disable, demote or delete the bootstrap admin; no reset link exists", async () => {
    const before = await snapshot();
    await refused(await server.api(`/users/${adminUserId}/password-reset`, { method: "POST", token: usersAdminOnly }), "collectors:read");
    await refused(await server.api(`/users/${adminUserId}`, { method: "PATCH", token: usersAdminOnly, json: { disabled: true } }), "collectors:read");
    await refused(await server.api(`/users/${adminUserId}`, { method: "PATCH", token: usersAdminOnly, json: { role: "viewer" } }), "collectors:read");
    await refused(await server.api(`/users/${adminUserId}`, { method: "DELETE", token: usersAdminOnly }), "collectors:read");
    expect(await snapshot()).toEqual(before);
  });

  test("it cannot promote a user to a role above its own, nor act on a viewer whose scopes it lacks", async () => {
    const before = await snapshot();
    await refused(await server.api(`/users/${viewerId}`, { method: "PATCH", token: usersAdminOnly, json: { role: "admin" } }), "collectors:read");
    await refused(await server.api(`/users/${viewerId}/password-reset`, { method: "POST", token: usersAdminOnly }), "collectors:read");
    await refused(await server.api(`/users/${viewerId}`, { method: "DELETE", token: usersAdminOnly }), "collectors:read");
    expect(await snapshot()).toEqual(before);
  });

  test("it cannot delete a service account holding scopes it lacks (the bootstrap admin's)", async () => {
    const { items } = await server.call<{ items: { id: string; name: string }[] }>("/service-accounts");
    const before = await snapshot();
    await refused(
      await server.api(`/service-accounts/${items.find((a) => a.name === "admin")!.id}`, { method: "DELETE", token: usersAdminOnly }),
      "agents:browse",
    );
    expect(await snapshot()).toEqual(before);
    expect((await server.api("/collectors")).status).toBe(200);
  });
});

describe("within its own scopes a caller still administers", () => {
  test("viewer scopes + users:admin invite and reset viewers, but never make or touch an editor or admin", async () => {
    const viewerAdmin = await tokenWithScopes(server, [...ROLES.viewer, "users:admin"], "viewer-admin");
    const invited = await server.api("/users", { method: "POST", token: viewerAdmin, json: { username: "vera", email: "vera@example.com", role: "viewer" } });
    expect(invited.status).toBe(201);
    expect((await server.api(`/users/${viewerId}/password-reset`, { method: "POST", token: viewerAdmin })).status).toBe(201);

    const before = await snapshot();
    await refused(
      await server.api("/users", { method: "POST", token: viewerAdmin, json: { username: "eve", email: "eve@example.com", role: "editor" } }),
      "collectors:write",
    );
    await refused(await server.api(`/users/${viewerId}`, { method: "PATCH", token: viewerAdmin, json: { role: "editor" } }), "collectors:write");
    await refused(await server.api(`/users/${editorId}`, { method: "PATCH", token: viewerAdmin, json: { disabled: true } }), "collectors:write");
    await refused(await server.api(`/users/${editorId}/password-reset`, { method: "POST", token: viewerAdmin }), "collectors:write");
    await refused(await server.api(`/users/${editorId}`, { method: "DELETE", token: viewerAdmin }), "collectors:write");
    expect(await snapshot()).toEqual(before);

    const vera = ((await invited.json()) as { user: { id: string } }).user.id;
    expect((await server.api(`/users/${vera}`, { method: "PATCH", token: viewerAdmin, json: { disabled: true } })).status).toBe(200);
    expect((await server.api(`/users/${vera}`, { method: "DELETE", token: viewerAdmin })).status).toBe(204);
  });

  test("the admin (all scopes) still invites, resets and deletes any role", async () => {
    const res = await server.api("/users", { method: "POST", json: { username: "second-admin", email: "a2@example.com", role: "admin" } });
    expect(res.status).toBe(201);
    const id = ((await res.json()) as { user: { id: string } }).user.id;
    expect((await server.api(`/users/${id}/password-reset`, { method: "POST" })).status).toBe(201);
    expect((await server.api(`/users/${id}`, { method: "DELETE" })).status).toBe(204);
  });
});
