/**
 * POST /bootstrap-files: the bootstrap files for a token the caller holds,
 * the token in the body (never the URL). An opamp enrollment token renders
 * the otelcol files, a collector token the alloy file; a runtime that does
 * not fit, an agent, revoked or unknown token is a 400 on `token`; a viewer
 * may not call it; nothing is redeemed.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ROLES } from "../auth/scopes.ts";
import { startTestServer, tokenWithScopes, type TestServer } from "../../test/harness.ts";

let server: TestServer;
let bare: TestServer;
beforeAll(async () => {
  [server, bare] = await Promise.all([startTestServer({ SVC_EXTERNALURL: "https://svc.example.com/" }), startTestServer()]);
});
afterAll(async () => {
  await Promise.all([server.stop(), bare.stop()]);
});

interface Files {
  runtime: string;
  files: { path: string; contentType: string; body: string }[];
}
interface Refusal {
  error: { code: string; message: string; details: { path: string; message: string }[] };
}

const render = (json: unknown, target = server, token?: string) => target.api("/bootstrap-files", { method: "POST", json, ...(token ? { token } : {}) });

async function answer<T>(res: Promise<Response>, status: number): Promise<T> {
  const r = await res;
  const text = await r.text();
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${text}`);
  return JSON.parse(text) as T;
}

test("an opamp enrollment token renders the Runtime O files and is not redeemed", async () => {
  const { id, token } = await server.call<{ id: string; token: string }>("/enrollment-tokens", "POST", { kind: "opamp" });
  const result = await answer<Files>(render({ token, runtime: "otelcol" }), 200);
  expect(result.runtime).toBe("otelcol");
  expect(result.files.map((f) => f.path)).toEqual(["/etc/otel-collector/config.yaml", "/etc/opampsupervisor/config.yaml"]);
  expect(result.files[0]!.body).toContain(`Bearer ${token}`);
  expect(result.files[0]!.body).toContain("wss://svc.example.com/v1/opamp");
  const { items } = await server.call<{ items: { id: string; uses: number; boundInstanceUid: string | null }[] }>("/enrollment-tokens");
  expect(items.find((t) => t.id === id)).toMatchObject({ uses: 0, boundInstanceUid: null });
});

test("a collector token renders the Runtime R file for its collector", async () => {
  const collector = await server.call<{ id: string }>("/collectors", "POST", { name: "rcfg", managementMode: "rcfg-remotecfg" });
  const { token } = await server.call<{ token: string }>(`/collectors/${collector.id}/otlp-token`, "POST");
  const result = await answer<Files>(render({ token }), 200);
  expect(result.runtime).toBe("alloy");
  expect(result.files.map((f) => f.path)).toEqual(["/etc/rcfg-runtime/config.rcfg"]);
  expect(result.files[0]!.body).toContain(collector.id);
  expect(result.files[0]!.body).toContain(token);
});

test("a token for the other runtime, an agent, revoked or unknown token is a 400 on token", async () => {
  const opamp = await server.call<{ id: string; token: string }>("/enrollment-tokens", "POST", { kind: "opamp" });
  const agent = await server.call<{ token: string }>("/enrollment-tokens", "POST", { kind: "agent" });
  const refusedToken = async (json: unknown) => {
    const { error } = await answer<Refusal>(render(json), 400);
    expect(error.code).toBe("validation_failed");
    expect(error.details.map((d) => d.path)).toEqual(["token"]);
    return error;
  };
  expect((await refusedToken({ token: opamp.token, runtime: "alloy" })).message).toContain("otelcol");
  await refusedToken({ token: agent.token });
  await refusedToken({ token: "svcen_" + "x".repeat(40) });
  await server.call(`/enrollment-tokens/${opamp.id}`, "DELETE");
  await refusedToken({ token: opamp.token });
  const missing = await answer<Refusal>(render({}), 400);
  expect(missing.error.details[0]!.path).toBe("token");
});

test("a viewer may not call it; a server without externalUrl says so", async () => {
  const viewer = await tokenWithScopes(server, [...ROLES.viewer]);
  const { token } = await server.call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp" });
  expect((await render({ token }, server, viewer)).status).toBe(403);
  const { token: bareToken } = await bare.call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp" });
  expect((await answer<Refusal>(render({ token: bareToken }, bare), 409)).error.code).toBe("external_url_missing");
});
