/**
 * Request size limits on every endpoint: each route of the OpenAPI document
 * refuses a body one byte over its limit with 413 in the shared error shape,
 * whether the length is declared or the body is streamed; a gzip bomb is cut
 * at the limit, not inflated whole; the collector channels bound theirs too
 * (OpAMP answers with a retry-after instead of 413).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fromBinary } from "@bufbuild/protobuf";
import { gzipSync } from "node:zlib";
import { ServerErrorResponseType, ServerToAgentSchema } from "../../server/gen/opamp/v1/opamp_pb.ts";
import { MAX_MESSAGE_BYTES } from "../../server/opamp/channel.ts";
import { startTestServer, type TestServer } from "../harness.ts";

const LIMIT = 4096;
let server: TestServer;
let session: { cookie: string; csrf: string };
beforeAll(async () => {
  server = await startTestServer({ SVC_HTTP_MAXBODYBYTES: String(LIMIT) });
  const { username, password } = await server.uiAdmin();
  const res = await server.api("/session", { method: "POST", token: null, json: { username, password } });
  expect(res.status).toBe(200);
  session = { cookie: res.headers.get("set-cookie")!.split(";")[0]!, csrf: ((await res.json()) as { csrfToken: string }).csrfToken };
});
afterAll(() => server.stop());

const concrete = (path: string) => path.replaceAll(/\{\w+\}/g, "0190c3c0-0000-7000-8000-000000000000");

/** A JSON document of exactly `size` bytes. */
function jsonOf(size: number): string {
  return `{"pad":"${"x".repeat(size - 10)}"}`;
}

function stream(bytes: Uint8Array, chunk = 1024): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.byteLength) return controller.close();
      controller.enqueue(bytes.subarray(at, (at += chunk)));
    },
  });
}

async function expectTooLarge(res: Response, what: unknown) {
  const body = (await res.json()) as { error: { code: string; message: string; details: unknown[] } };
  expect({ what, status: res.status, code: body.error.code }).toEqual({ what, status: 413, code: "payload_too_large" });
  expect(body.error.details).toEqual([]);
}

describe("REST", () => {
  test("every route of the OpenAPI document refuses a body one byte over its limit", async () => {
    const doc = (await (await server.api("/openapi.json")).json()) as {
      paths: Record<string, Record<string, { "x-required-scope"?: string; "x-max-body-bytes"?: number; security: unknown[] }>>;
    };
    let walked = 0;
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        if (method === "get" || method === "head") continue; // No body on a read (fetch cannot send one).
        const limit = op["x-max-body-bytes"] ?? LIMIT;
        const headers: Record<string, string> = { "Content-Type": "application/json" };
        const sessionOnly = op.security.length > 0 && op["x-required-scope"] === undefined;
        if (sessionOnly) Object.assign(headers, { Cookie: session.cookie, "X-CSRF-Token": session.csrf });
        const token = op.security.length === 0 || sessionOnly ? null : server.adminToken;
        const res = await server.api(concrete(path), { method: method.toUpperCase(), token, headers, body: jsonOf(limit + 1) });
        await expectTooLarge(res, `${method.toUpperCase()} ${path}`);
        walked++;
      }
    }
    expect(walked).toBeGreaterThan(20);
  });

  test("a streamed body with no Content-Length is cut at the limit", async () => {
    const res = await server.api("/service-accounts", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: stream(new TextEncoder().encode(jsonOf(LIMIT * 4))),
    });
    await expectTooLarge(res, "streamed");
  });

  test("a gzip body is bounded once inflated: a bomb is refused, a small one is read", async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, " "));
    expect(bomb.byteLength).toBeLessThan(LIMIT * 32);
    const res = await server.api("/service-accounts", {
      method: "POST",
      headers: { "Content-Type": "application/json", "Content-Encoding": "gzip" },
      body: stream(bomb),
    });
    // The compressed bytes alone are over the limit here; a smaller bomb is cut by the inflated bound.
    await expectTooLarge(res, "bomb");
    const small = gzipSync(Buffer.alloc(LIMIT * 100, " "));
    expect(small.byteLength).toBeLessThan(LIMIT);
    await expectTooLarge(
      await server.api("/service-accounts", { method: "POST", headers: { "Content-Type": "application/json", "Content-Encoding": "gzip" }, body: small }),
      "small bomb",
    );
    const fine = gzipSync(JSON.stringify({ name: "gzipped", scopes: ["collectors:read"] }));
    const created = await server.api("/service-accounts", {
      method: "POST",
      headers: { "Content-Type": "application/json", "Content-Encoding": "gzip" },
      body: fine,
    });
    expect(created.status).toBe(201);
  });

  test("an encoding other than gzip is 415", async () => {
    const res = await server.api("/service-accounts", {
      method: "POST",
      headers: { "Content-Type": "application/json", "Content-Encoding": "br" },
      body: "{}",
    });
    expect(res.status).toBe(415);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unsupported_encoding");
  });
});

describe("collector channels", () => {
  let opampToken: string;
  beforeAll(async () => {
    opampToken = (await server.call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp" })).token;
  });

  test("OpAMP over HTTP: over the message limit, declared or streamed, and a gzip bomb", async () => {
    const post = (body: Bun.BodyInit, headers: Record<string, string> = {}) =>
      fetch(`${server.base}/v1/opamp`, {
        method: "POST",
        headers: { "Content-Type": "application/x-protobuf", Authorization: `Bearer ${opampToken}`, ...headers },
        body,
      });
    // Not read past the limit, and answered as OpAMP asks a client to come back later (UNAVAILABLE with a
    // retry-after in a 200, which opamp-go reads; server/opamp/channel.ts tooLarge), on a connection then closed.
    const expectRetryLater = async (res: Response, what: string) => {
      const { errorResponse } = fromBinary(ServerToAgentSchema, new Uint8Array(await res.arrayBuffer()));
      expect({ what, status: res.status, connection: res.headers.get("connection"), type: errorResponse?.type, retry: errorResponse?.Details.case }).toEqual({
        what,
        status: 200,
        connection: "close",
        type: ServerErrorResponseType.ServerErrorResponseType_Unavailable,
        retry: "retryInfo",
      });
    };
    await expectRetryLater(await post(new Uint8Array(MAX_MESSAGE_BYTES + 1)), "opamp declared");
    await expectRetryLater(await post(stream(new Uint8Array(MAX_MESSAGE_BYTES + 1), 256 * 1024)), "opamp streamed");
    await expectRetryLater(await post(gzipSync(new Uint8Array(MAX_MESSAGE_BYTES + 1)), { "Content-Encoding": "gzip" }), "opamp bomb");
  });

  test("/v1/metrics: a gzip bomb is cut at the decompressed limit", async () => {
    const collector = await server.call<{ id: string }>("/collectors", "POST", { name: "metrics-limits" });
    const { token } = await server.call<{ token: string }>(`/collectors/${collector.id}/otlp-token`, "POST");
    const res = await fetch(`${server.base}/v1/metrics`, {
      method: "POST",
      headers: { "Content-Type": "application/x-protobuf", "Content-Encoding": "gzip", Authorization: `Bearer ${token}` },
      body: gzipSync(new Uint8Array(64 * 1024 * 1024)),
    });
    // OTLP answers in its own Status message, in the body's encoding.
    expect(res.status).toBe(413);
  });

  test("remote config: a streamed body over 8 MiB is resource_exhausted", async () => {
    const collector = await server.call<{ id: string }>("/collectors", "POST", { name: "rcfg-limits", managementMode: "rcfg-remotecfg" });
    const { token } = await server.call<{ token: string }>(`/collectors/${collector.id}/otlp-token`, "POST");
    const res = await fetch(`${server.base}/collector.v1.CollectorService/GetConfig`, {
      method: "POST",
      headers: { "Content-Type": "application/proto", Authorization: `Bearer ${token}` },
      body: stream(new Uint8Array(8 * 1024 * 1024 + 1), 256 * 1024),
    });
    expect(res.status).toBe(429); // Connect maps resource_exhausted to 429.
    expect(await res.json()).toMatchObject({ code: "resource_exhausted" });
  });
});
