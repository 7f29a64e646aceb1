/**
 * Security headers on every class of answer: API JSON (a success, an error, a
 * minted secret), the UI's HTML and assets, a collector channel, the probes;
 * and Strict-Transport-Security only when served over TLS.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startTestServer, type TestServer } from "../harness.ts";
import { removeTempDirs, tempDir } from "../process/spawn.ts";

/** Every answer, whatever made it. */
function expectCommon(res: Response) {
  expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  expect(res.headers.get("referrer-policy")).toMatch(/^(no-referrer|same-origin)$/);
}

/** API answers and errors: never cached, never framed. */
function expectApi(res: Response) {
  expectCommon(res);
  expect(res.headers.get("cache-control")).toBe("no-store");
  expect(res.headers.get("x-frame-options")).toBe("DENY");
  expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
}

describe("over plain HTTP", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ SVC_EXTERNALURL: "https://svc.example.com/" });
  });
  afterAll(async () => {
    await server.stop();
  });

  test("API answers, errors and secret-bearing answers are no-store and unframeable, with no HSTS", async () => {
    const ok = await server.api("/collectors");
    expect(ok.status).toBe(200);
    expectApi(ok);
    expect(ok.headers.get("strict-transport-security")).toBeNull();

    const unauthenticated = await server.api("/collectors", { token: null });
    expect(unauthenticated.status).toBe(401);
    expectApi(unauthenticated);

    const notFound = await server.api("/no-such-route");
    expect(notFound.status).toBe(404);
    expectApi(notFound);

    const minted = await server.api("/service-accounts", { method: "POST", json: { name: "headers", scopes: ["collectors:read"] } });
    expect(minted.status).toBe(201);
    expectApi(minted);

    const enrollment = await server.api("/enrollment-tokens", { method: "POST", json: { kind: "opamp" } });
    expect(enrollment.status).toBe(201);
    expectApi(enrollment);

    const user = await server.api("/users", { method: "POST", json: { username: "invitee", email: "invitee@example.com", role: "viewer" } });
    expect(user.status).toBe(201);
    expectApi(user);

    const openapi = await server.api("/openapi.json", { token: null });
    expect(openapi.status).toBe(200);
    expectApi(openapi);
  });

  test("the UI's HTML and assets carry the CSP, frame-ancestors and X-Frame-Options DENY", async () => {
    const page = await fetch(`${server.base}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expectCommon(page);
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(page.headers.get("strict-transport-security")).toBeNull();

    const asset = /src="([^"]+\.js)"/.exec(await page.text())?.[1];
    expect(asset).toBeDefined();
    const script = await fetch(new URL(asset!, server.base));
    expect(script.status).toBe(200);
    expectCommon(script);
    expect(script.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");

    const missing = await fetch(`${server.base}/assets/no-such-file.js`);
    expect(missing.status).toBe(404);
    expectCommon(missing);
  });

  test("collector channels and the probes carry the common headers", async () => {
    const metrics = await fetch(`${server.base}/v1/metrics`, { method: "POST", body: "{}", headers: { "Content-Type": "application/json" } });
    expect(metrics.status).toBe(401);
    expectCommon(metrics);
    const bootstrap = await fetch(`${server.base}/v1/bootstrap`, { headers: { Authorization: "Bearer svcen_nope" } });
    expect(bootstrap.status).toBeGreaterThanOrEqual(400);
    expectCommon(bootstrap);
    for (const probe of ["/healthz", "/readyz"]) {
      const res = await fetch(`${server.base}${probe}`);
      expect(res.status).toBe(200);
      expectCommon(res);
    }
  });
});

describe("over TLS", () => {
  let server: TestServer;
  beforeAll(async () => {
    const dir = tempDir("svc-tls-");
    const certFile = join(dir, "cert.pem");
    const keyFile = join(dir, "key.pem");
    const openssl = Bun.spawn(
      [
        "openssl",
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=127.0.0.1",
        "-keyout",
        keyFile,
        "-out",
        certFile,
      ],
      { stdout: "ignore", stderr: "pipe" },
    );
    expect(await openssl.exited).toBe(0);
    server = await startTestServer({ SVC_TLS_CERTFILE: certFile, SVC_TLS_KEYFILE: keyFile });
  });
  afterAll(async () => {
    await server.stop();
    removeTempDirs();
  });

  test("every class of answer carries Strict-Transport-Security", async () => {
    expect(server.base).toStartWith("https://");
    const tls = { rejectUnauthorized: false };
    const answers = [
      await fetch(`${server.base}/api/v1/collectors`, { tls, headers: { Authorization: `Bearer ${server.adminToken}` } }),
      await fetch(`${server.base}/api/v1/collectors`, { tls }),
      await fetch(`${server.base}/`, { tls }),
      await fetch(`${server.base}/v1/metrics`, { tls, method: "POST", body: "{}" }),
      await fetch(`${server.base}/healthz`, { tls }),
    ];
    for (const res of answers) {
      expectCommon(res);
      expect(res.headers.get("strict-transport-security")).toBe("max-age=31536000");
    }
  });
});
