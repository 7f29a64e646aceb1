/** The one error shape, every status the foundation promises, request ids and CORS. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../harness.ts";
import type { ErrorBody } from "../../server/http/schemas.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ SVC_EXTERNALURL: "https://svc.example.com", SVC_HTTP_MAXBODYBYTES: "2048" });
});
afterAll(() => server.stop());

async function expectError(res: Response, status: number, code: string): Promise<ErrorBody> {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toStartWith("application/json");
  const body = (await res.json()) as ErrorBody;
  expect(Object.keys(body)).toEqual(["error"]);
  expect(Object.keys(body.error).sort()).toEqual(["code", "details", "message"]);
  expect(body.error.code).toBe(code);
  expect(body.error.message.length).toBeGreaterThan(10);
  expect(Array.isArray(body.error.details)).toBe(true);
  return body;
}

describe("error shape", () => {
  test("401 without a token, with a malformed one, with Basic, and with a revoked one; WWW-Authenticate: Bearer", async () => {
    const attempts: Record<string, string>[] = [
      {},
      { Authorization: "Bearer nonsense" },
      { Authorization: "Basic YWRtaW46YWRtaW4=" },
      { Authorization: "Bearer svcsa_" + "x".repeat(43) },
    ];
    for (const headers of attempts) {
      const res = await server.api("/collectors", { token: null, headers });
      await expectError(res, 401, "unauthenticated");
      expect(res.headers.get("www-authenticate")).toStartWith("Bearer");
    }
  });

  test("403 names the missing scope", async () => {
    const res = await server.api("/service-accounts", { method: "POST", json: { name: "reader", scopes: ["collectors:read"] } });
    const { token } = (await res.json()) as { token: string };
    const denied = await expectError(await server.api("/system/health", { token }), 403, "forbidden");
    expect(denied.error.message).toContain("health:read");
    expect((await server.api("/collectors", { token })).status).toBe(200);
  });

  test("404 for an unknown route and for an unknown id; 405 with Allow for a wrong method", async () => {
    await expectError(await server.api("/no-such-thing"), 404, "not_found");
    await expectError(await server.api("/collectors/0190c3c0-0000-7000-8000-000000000000"), 404, "not_found");
    const wrong = await expectError(await server.api("/system/health", { method: "DELETE" }), 405, "method_not_allowed");
    expect(wrong.error.message).toContain("GET");
  });

  test("400 for malformed JSON and invalid UTF-8, never 500", async () => {
    const headers = { "Content-Type": "application/json" };
    await expectError(await server.api("/collectors", { method: "POST", headers, body: '{"name": ' }), 400, "malformed_json");
    await expectError(await server.api("/collectors", { method: "POST", headers, body: new Uint8Array([0x7b, 0xff, 0x7d]) }), 400, "validation_failed");
    await expectError(await server.api("/collectors", { method: "POST", headers, body: "[1,2]" }), 400, "validation_failed");
    await expectError(await server.api("/collectors", { method: "POST", headers, body: "null" }), 400, "validation_failed");
    await expectError(await server.api("/collectors", { method: "POST" }), 400, "validation_failed");
  });

  test("400 for a malformed percent-encoding in any path a router or channel decodes, never 500 or 404", async () => {
    for (const bad of ["%E0%A4%A", "%zz", "%"]) {
      const download = await expectError(await fetch(`${server.base}/downloads/${bad}`), 400, "validation_failed");
      expect(download.error.details).toEqual([{ path: "path", message: expect.stringContaining("'%'") }]);
      await expectError(await server.api(`/collectors/${bad}`), 400, "validation_failed");
      await expectError(await server.api(`/collectors/${bad}/config-history`), 400, "validation_failed");
    }
    // Well-formed escapes still decode: an unknown id is the usual 404.
    await expectError(await fetch(`${server.base}/downloads/no%20such.deb`), 404, "not_found");
    await expectError(await server.api("/collectors/a%20b"), 404, "not_found");
  });

  test("415 for a body that is not JSON", async () => {
    await expectError(
      await server.api("/collectors", { method: "POST", headers: { "Content-Type": "text/plain" }, body: "name=x" }),
      415,
      "unsupported_media_type",
    );
  });

  test("413 over the configured body limit, declared or chunked", async () => {
    const big = JSON.stringify({ name: "x".repeat(5000) });
    await expectError(
      await server.api("/collectors", { method: "POST", headers: { "Content-Type": "application/json" }, body: big }),
      413,
      "payload_too_large",
    );
    const chunked = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 10; i++) controller.enqueue(new TextEncoder().encode(i === 0 ? '{"name":"' : "y".repeat(500)));
        controller.close();
      },
    });
    await expectError(
      await server.api("/collectors", { method: "POST", headers: { "Content-Type": "application/json" }, body: chunked }),
      413,
      "payload_too_large",
    );
  });

  test("nothing stored changes on a refused request", async () => {
    const before = ((await (await server.api("/collectors?limit=1000")).json()) as { items: unknown[] }).items.length;
    await server.api("/collectors", { method: "POST", json: { name: "" } });
    await server.api("/collectors", { method: "POST", token: null, json: { name: "sneaky" } });
    const after = ((await (await server.api("/collectors?limit=1000")).json()) as { items: unknown[] }).items.length;
    expect(after).toBe(before);
  });
});

describe("request ids", () => {
  test("every answer carries X-Request-Id; a sane incoming one is echoed", async () => {
    const generated = await server.api("/collectors");
    expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const echoed = await server.api("/collectors", { headers: { "X-Request-Id": "abc-123" } });
    expect(echoed.headers.get("x-request-id")).toBe("abc-123");
    const insane = await server.api("/collectors", { headers: { "X-Request-Id": "a b\tc" } });
    expect(insane.headers.get("x-request-id")).not.toBe("a b\tc");
    const failed = await server.api("/nope", { token: null });
    expect(failed.headers.get("x-request-id")).toBeTruthy();
  });
});

describe("CORS", () => {
  test("with no allowedOrigins, externalUrl is the single allowed origin", async () => {
    const ok = await server.api("/collectors", { headers: { Origin: "https://svc.example.com" } });
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://svc.example.com");
    const other = await server.api("/collectors", { headers: { Origin: "https://evil.example" } });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    const preflight = await fetch(`${server.base}/api/v1/collectors`, {
      method: "OPTIONS",
      headers: { Origin: "https://svc.example.com", "Access-Control-Request-Method": "POST" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-methods")).toContain("POST");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("Authorization");
    const denied = await fetch(`${server.base}/api/v1/collectors`, {
      method: "OPTIONS",
      headers: { Origin: "https://evil.example", "Access-Control-Request-Method": "POST" },
    });
    await expectError(denied, 403, "cors_origin_denied");
  });

  test("security.cors.allowedOrigins replaces externalUrl", async () => {
    const other = await startTestServer({
      SVC_EXTERNALURL: "https://svc.example.com",
      SVC_SECURITY_CORS_ALLOWEDORIGINS: "https://a.example, https://b.example:8443",
    });
    try {
      const origin = async (value: string) => (await other.api("/collectors", { headers: { Origin: value } })).headers.get("access-control-allow-origin");
      expect(await origin("https://a.example")).toBe("https://a.example");
      expect(await origin("https://b.example:8443")).toBe("https://b.example:8443");
      expect(await origin("https://svc.example.com")).toBeNull();
    } finally {
      await other.stop();
    }
  });
});

describe("probes", () => {
  test("/healthz and /readyz answer without credentials and reveal nothing", async () => {
    const healthz = await fetch(`${server.base}/healthz`);
    expect(healthz.status).toBe(200);
    expect(await healthz.text()).toBe("ok\n");
    const readyz = await fetch(`${server.base}/readyz`);
    expect(readyz.status).toBe(200);
    expect(await readyz.text()).toBe("ready\n");
  });

  test("GET /system/health reports store, version, uptime and externalUrl", async () => {
    const res = await server.api("/system/health");
    expect(res.status).toBe(200);
    const health = (await res.json()) as Record<string, unknown>;
    expect(health).toMatchObject({
      status: "ok",
      externalUrl: "https://svc.example.com",
      storage: { backend: "embedded", status: "up" },
      collectors: { pending: expect.any(Number), online: 0, degraded: 0, offline: 0 },
    });
    expect(health.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(health.uptimeSeconds).toBeGreaterThanOrEqual(0);
  });

  test("a store that cannot serve makes /readyz 503 and health degraded", async () => {
    const other = await startTestServer();
    await other.app.store.close();
    try {
      expect((await fetch(`${other.base}/readyz`)).status).toBe(503);
    } finally {
      await other.http.stop();
    }
  });
});
