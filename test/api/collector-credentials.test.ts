/**
 * Issue 33 item 2: a collector's credential (its own token, or an opamp
 * enrollment token, which enrolls as or creates a collector) is answered its
 * config with every secret filled in, so minting one needs collectors:enroll,
 * which only admins hold. Over real sockets: collectors:write (with
 * tokens:write) alone gets 403 on every minting call, audited as auth.denied,
 * and no token exists after; with collectors:enroll each call mints and is
 * audited. The routes are the access policy's: a route that mints but kept
 * collectors:write would be missed by neither list.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ROLES } from "../../server/auth/scopes.ts";
import { startTestServer, tokenWithScopes, type TestServer } from "../harness.ts";
import policy from "./access-policy.json" with { type: "json" };

let server: TestServer;
let opampId: string;
let alloyId: string;
let writer: string;
let enroller: string;

beforeAll(async () => {
  server = await startTestServer({ SVC_EXTERNALURL: "https://svc.example.com/" });
  opampId = (await server.call<{ id: string }>("/collectors", "POST", { name: "cred-opamp", managementMode: "opamp" })).id;
  alloyId = (await server.call<{ id: string }>("/collectors", "POST", { name: "cred-alloy", managementMode: "rcfg-remotecfg" })).id;
  // Everything an editor holds that bears on collectors and tokens, but not collectors:enroll.
  writer = await tokenWithScopes(server, ["collectors:read", "collectors:write", "tokens:read", "tokens:write"], "cred-writer");
  enroller = await tokenWithScopes(server, ["collectors:read", "collectors:write", "collectors:enroll", "tokens:read", "tokens:write"], "cred-enroller");
});
afterAll(() => server.stop());

/** Every call that answers a credential bound to a collector, with the audit action its success writes. */
const minting = () => [
  { route: "POST /collectors/{id}/otlp-token", path: `/collectors/${alloyId}/otlp-token`, method: "POST", action: "collector.token.rotate" },
  { route: "POST /collectors/{id}/metrics-token", path: `/collectors/${opampId}/metrics-token`, method: "POST", action: "collector.metrics-token.rotate" },
  { route: "POST /collectors/snippet", path: `/collectors/snippet?collectorId=${opampId}`, method: "POST", action: "enrollment.create" },
  { route: "POST /collectors/snippet", path: `/collectors/snippet?collectorId=${alloyId}`, method: "POST", action: "collector.token.rotate" },
  { route: "GET /collectors/snippet", path: "/collectors/snippet?environment=prod", method: "GET", action: "enrollment.create" },
  { route: "POST /collectors/bootstrap", path: "/collectors/bootstrap?environment=prod", method: "POST", action: "enrollment.create" },
  { route: "POST /collectors/{id}/bootstrap", path: `/collectors/${opampId}/bootstrap`, method: "POST", action: "enrollment.create" },
  { route: "POST /collectors/{id}/bootstrap", path: `/collectors/${alloyId}/bootstrap`, method: "POST", action: "collector.token.rotate" },
  { route: "POST /enrollment-tokens", path: "/enrollment-tokens", method: "POST", json: { kind: "opamp", collectorId: opampId }, action: "enrollment.create" },
  { route: "POST /enrollment-tokens", path: "/enrollment-tokens", method: "POST", json: { kind: "opamp", environment: "prod" }, action: "enrollment.create" },
];

interface Entry {
  action: string;
  actor: string;
  outcome: string;
  details: Record<string, unknown>;
}

async function audit(actor: string): Promise<Entry[]> {
  const res = await server.api(`/audit?actor=${encodeURIComponent(actor)}&limit=1000`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { items: Entry[] }).items;
}

/** Enrollment token ids and collector token and metrics credential digests: what a mint adds. */
async function credentials(): Promise<string[]> {
  const tokens = (await server.call<{ items: { id: string }[] }>("/enrollment-tokens")).items.map((t) => t.id);
  const current = [];
  for (const collection of ["collector_tokens", "collector_metrics_tokens"]) {
    current.push(...(await server.app.store.list<{ digest: string }>(collection, { limit: 1000 })).map((d) => d.data.digest));
  }
  return [...tokens, ...current].sort();
}

test("the access policy names collectors:enroll for each minting route, held by admin alone", () => {
  for (const { route, json } of minting()) {
    const input = policy.inputScopes.find((i) => i.route === route && json !== undefined && json.kind === i.body.kind);
    const scope = input?.scope ?? (policy.routes as Record<string, string>)[route];
    expect({ route, scope }).toEqual({ route, scope: "collectors:enroll" });
  }
  expect(ROLES.admin).toContain("collectors:enroll");
  expect(ROLES.editor).not.toContain("collectors:enroll");
  expect(ROLES.viewer).not.toContain("collectors:enroll");
});

test("collectors:write and tokens:write without collectors:enroll: 403 on every minting call, audited, nothing minted", async () => {
  const before = await credentials();
  for (const call of minting()) {
    const res = await server.api(call.path, { method: call.method, json: call.json, token: writer });
    const body = (await res.json()) as { error?: { code: string; message: string } };
    expect({ call: call.path, status: res.status, code: body.error?.code }).toEqual({ call: call.path, status: 403, code: "forbidden" });
    expect(body.error!.message).toContain("collectors:enroll");
  }
  expect(await credentials()).toEqual(before);
  const denied = (await audit("sa:cred-writer")).filter((e) => e.action === "auth.denied");
  expect(denied.length).toBe(minting().length);
  expect(denied.every((e) => e.outcome === "denied" && e.details.scope === "collectors:enroll")).toBe(true);
  // An agent token is not a collector's credential: tokens:write still mints it.
  const agent = await server.api("/enrollment-tokens", { method: "POST", json: { kind: "agent" }, token: writer });
  expect(agent.status).toBe(201);
});

test("with collectors:enroll every minting call answers a credential and is audited", async () => {
  for (const call of minting()) {
    const res = await server.api(call.path, { method: call.method, json: call.json, token: enroller });
    const text = await res.text();
    expect({ call: call.path, status: res.status }).toEqual({ call: call.path, status: call.method === "GET" ? 200 : 201 });
    expect(text).toMatch(/svcen_|svcct_|svccm_/);
  }
  const entries = await audit("sa:cred-enroller");
  const successes = entries.filter((e) => e.outcome === "success").map((e) => e.action);
  const wanted = minting().map((c) => c.action);
  expect(successes.sort()).toEqual(wanted.sort());
});
