/**
 * Rate limits at the edge: a credential past its REST rate, an address past
 * its failed authentications, and enrollment tokens past their rate per token
 * and per address all get 429 `rate_limited` with Retry-After in the shared
 * shape; a burst of refusals leaves one audit entry, not one per request.
 * Each block runs its own server with small buckets (1 token a second), so
 * the refills cannot race the test.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, tokenWithScopes, type TestServer } from "../harness.ts";
import type { ErrorBody } from "../../server/http/schemas.ts";

async function expectRateLimited(res: Response, message: string) {
  expect(res.status).toBe(429);
  expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  const body = (await res.json()) as ErrorBody;
  expect(body.error).toMatchObject({ code: "rate_limited", details: [] });
  expect(body.error.message).toContain(message);
}

/** The audit entries of refusals, once the one written in the background has landed. */
async function refusalsAudited(server: TestServer, token?: string): Promise<{ resource: string; resourceId: string; outcome: string }[]> {
  for (let i = 0; i < 50; i++) {
    const res = await server.api("/audit?action=ratelimit.refused", token === undefined ? {} : { token });
    expect(res.status).toBe(200);
    const { items } = (await res.json()) as { items: { resource: string; resourceId: string; outcome: string }[] };
    if (items.length > 0) return items;
    await Bun.sleep(20);
  }
  return [];
}

describe("per credential on the REST API", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ SVC_RATELIMIT_API_PERSECOND: "1", SVC_RATELIMIT_API_BURST: "10" });
  });
  afterAll(() => server.stop());

  test("past its burst a token gets 429 with Retry-After; another token is not held back; one audit entry", async () => {
    const busy = await tokenWithScopes(server, ["collectors:read"], "busy");
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await server.api("/collectors", { token: busy })).status);
    expect(statuses).toEqual(Array(10).fill(200));
    for (let i = 0; i < 20; i++) await expectRateLimited(await server.api("/collectors", { token: busy }), "Too many calls with this credential");
    expect((await server.api("/collectors")).status).toBe(200);
    const reader = await tokenWithScopes(server, ["audit:read"], "auditor");
    const entries = await refusalsAudited(server, reader);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ resource: "principal", resourceId: "sa:busy", outcome: "denied" });
  });
});

describe("failed authentications per address", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ SVC_RATELIMIT_AUTHFAILURES_PERSECOND: "1", SVC_RATELIMIT_AUTHFAILURES_BURST: "5" });
  });
  afterAll(() => server.stop());

  test("after its burst of 401s the address gets 429 before any credential is checked, on the API and the channels", async () => {
    const bad = "svcsa_" + "A".repeat(40);
    for (let i = 0; i < 5; i++) expect((await server.api("/collectors", { token: bad })).status).toBe(401);
    await expectRateLimited(await server.api("/collectors", { token: bad }), "Too many failed authentications");
    // The right credential from the same address waits too: guessing is what is being slowed.
    const held = await server.api("/collectors");
    await expectRateLimited(held, "Too many failed authentications");
    await expectRateLimited(
      await fetch(`${server.base}/v1/opamp`, { method: "POST", headers: { Authorization: `Bearer ${bad}`, "Content-Type": "application/x-protobuf" } }),
      "Too many failed authentications",
    );
    // Logging in is what a guesser would turn to next: held too.
    await expectRateLimited(
      await server.api("/session", { method: "POST", token: null, json: { username: "admin", password: "guess" } }),
      "Too many failed authentications",
    );
    await Bun.sleep(Number(held.headers.get("retry-after")) * 1000);
    const entries = await refusalsAudited(server);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ resource: "address", resourceId: "127.0.0.1", outcome: "denied" });
  });
});

describe("failed authentications behind a trusted proxy", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      SVC_HTTP_TRUSTEDPROXIES: "127.0.0.1",
      SVC_RATELIMIT_AUTHFAILURES_PERSECOND: "1",
      SVC_RATELIMIT_AUTHFAILURES_BURST: "3",
    });
  });
  afterAll(() => server.stop());

  test("count per forwarded client, so one client's failures do not hold back the others behind the proxy", async () => {
    const from = (client: string, token: string | null) => server.api("/collectors", { token, headers: { "X-Forwarded-For": `${client}, 127.0.0.1` } });
    for (let i = 0; i < 3; i++) expect((await from("203.0.113.7", "svcsa_" + "B".repeat(40))).status).toBe(401);
    await expectRateLimited(await from("203.0.113.7", server.adminToken), "Too many failed authentications");
    expect((await from("203.0.113.8", server.adminToken)).status).toBe(200);
    const entries = await refusalsAudited(server, await tokenWithScopes(server, ["audit:read"]));
    expect(entries[0]).toMatchObject({ resource: "address", resourceId: "203.0.113.7" });
  });
});

describe("enrollment attempts per token and per address", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ SVC_RATELIMIT_ENROLLMENT_PERSECOND: "1", SVC_RATELIMIT_ENROLLMENT_BURST: "3" });
  });
  afterAll(() => server.stop());

  const bootstrap = (token: string) => fetch(`${server.base}/v1/bootstrap?file=nothing`, { headers: { Authorization: `Bearer ${token}` } });

  test("a token past its rate gets 429, then a fresh token from the same address is held by the address's rate", async () => {
    const first = (await server.call<{ token: string }>("/enrollment-tokens", "POST", { kind: "agent" })).token;
    const second = (await server.call<{ token: string }>("/enrollment-tokens", "POST", { kind: "agent" })).token;
    // Admitted (here the channel then wants an externalUrl to render for: 409), not limited.
    for (let i = 0; i < 3; i++) expect((await bootstrap(first)).status).toBe(409);
    await expectRateLimited(await bootstrap(first), "Too many enrollment attempts with this token");
    await expectRateLimited(await bootstrap(second), "Too many enrollment attempts from this address");
    // Enrollment limits do not touch the REST API.
    expect((await server.api("/collectors")).status).toBe(200);
    const entries = await refusalsAudited(server);
    expect(entries.map((e) => e.resource).sort()).toEqual(["address", "enrollment_token"]);
  });
});
