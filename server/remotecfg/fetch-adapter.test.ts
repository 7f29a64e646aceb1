/**
 * The unary Fetch adapter under a real Connect router: routing and the 404
 * for an unknown procedure, the body limit, Connect error bodies (storage
 * refusals as retryable `unavailable` with their Retry-After, anything else
 * `internal` without its message), and gzip within the read limit.
 */
import { Code, ConnectError, createConnectRouter } from "@connectrpc/connect";
import { describe, expect, test } from "bun:test";
import { gzipSync } from "node:zlib";
import { InsufficientStorageError, RateLimitedError } from "../errors.ts";
import { CollectorService } from "../gen/collector/v1/collector_pb.ts";
import { compressionGzip, connectErrorResponse, retryableRefusals, UnaryFetchRouter } from "./fetch-adapter.ts";

/** The adapter's body limit; the Connect router's own read limit is larger, so a refusal below it is the adapter's. */
const LIMIT = 1024;
const ROUTER_LIMIT = 4 * LIMIT;

/** A router whose GetConfig echoes the id as content, and throws `fail` when the id is "fail". */
function router(fail: unknown = new Error("boom")): UnaryFetchRouter {
  const connect = createConnectRouter({
    connect: true,
    grpc: false,
    grpcWeb: false,
    readMaxBytes: ROUTER_LIMIT,
    acceptCompression: [compressionGzip],
    interceptors: [retryableRefusals],
  });
  connect.service(CollectorService, {
    getConfig: (req) => {
      if (req.id === "fail") throw fail;
      return { content: req.id, hash: "h" };
    },
    registerCollector: () => ({}),
    unregisterCollector: () => ({}),
  });
  return new UnaryFetchRouter(connect.handlers, LIMIT);
}

const PATH = `/${CollectorService.typeName}/GetConfig`;

function post(body: string | Uint8Array<ArrayBuffer>, headers: Record<string, string> = {}, path = PATH): Request {
  return new Request(`http://svc${path}`, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body });
}

describe("UnaryFetchRouter", () => {
  test("routes a unary call to its handler and answers its message", async () => {
    const res = await router().handle(post(JSON.stringify({ id: "c1" })), PATH);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ content: "c1", hash: "h" });
  });

  test("an unknown procedure is unimplemented with HTTP 404", async () => {
    const path = `/${CollectorService.typeName}/Nope`;
    const res = await router().handle(post("{}", {}, path), path);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: "unimplemented" });
  });

  test("a body over the adapter's limit is resource_exhausted, refused before the router reads it", async () => {
    const res = await router().handle(post(JSON.stringify({ id: "x".repeat(LIMIT) })), PATH);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.json()).toMatchObject({ code: "resource_exhausted" });
  });

  test("a handler's storage refusal is unavailable with its Retry-After; another error is internal", async () => {
    const full = await router(new InsufficientStorageError("the store", 30)).handle(post(JSON.stringify({ id: "fail" })), PATH);
    expect(full.status).toBe(503);
    expect(full.headers.get("retry-after")).toBe("30");
    expect(await full.json()).toMatchObject({ code: "unavailable" });
    const other = await router().handle(post(JSON.stringify({ id: "fail" })), PATH);
    expect(other.status).toBe(500);
    expect(await other.json()).toMatchObject({ code: "internal" });
  });

  test("a gzip body is read up to the router's limit uncompressed", async () => {
    const small = gzipSync(JSON.stringify({ id: "zipped" }));
    const ok = await router().handle(post(small, { "Content-Encoding": "gzip" }), PATH);
    expect(await ok.json()).toEqual({ content: "zipped", hash: "h" });
    const bomb = gzipSync(JSON.stringify({ id: "x".repeat(100 * ROUTER_LIMIT) }));
    expect(bomb.byteLength).toBeLessThan(LIMIT);
    const refused = await router().handle(post(bomb, { "Content-Encoding": "gzip" }), PATH);
    expect(await refused.json()).toMatchObject({ code: "resource_exhausted" });
  });
});

describe("connectErrorResponse", () => {
  test("a ConnectError keeps its code, message and metadata, with the protocol's HTTP status", async () => {
    const res = connectErrorResponse(new ConnectError("go away", Code.PermissionDenied, { "X-Why": "policy" }));
    expect(res.status).toBe(403);
    expect(res.headers.get("x-why")).toBe("policy");
    expect(await res.json()).toEqual({ code: "permission_denied", message: "go away" });
    expect(connectErrorResponse(new ConnectError("nope", Code.Unimplemented), 404).status).toBe(404);
  });

  test("a server error with Retry-After is unavailable; one without, or a 4xx, is internal and its message stays out", async () => {
    const full = connectErrorResponse(new InsufficientStorageError("the store", 7));
    expect([full.status, full.headers.get("retry-after")]).toEqual([503, "7"]);
    for (const error of [new Error("secret detail"), new RateLimitedError("slow down", 3)]) {
      const res = connectErrorResponse(error);
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ code: "internal", message: "internal error" });
    }
  });
});

describe("compressionGzip", () => {
  test("round-trips, refuses what inflates past the limit, and calls garbage invalid_argument", async () => {
    const bytes = new TextEncoder().encode("hello ".repeat(100));
    expect(await compressionGzip.decompress(await compressionGzip.compress(bytes), LIMIT)).toEqual(bytes);
    expect((await compressionGzip.decompress(new Uint8Array(0), LIMIT)).byteLength).toBe(0);
    const tooBig = await compressionGzip.decompress(new Uint8Array(gzipSync(new Uint8Array(LIMIT + 1))), LIMIT).catch((e: unknown) => e);
    expect((tooBig as ConnectError).code).toBe(Code.ResourceExhausted);
    const garbage = await compressionGzip.decompress(new Uint8Array([1, 2, 3]), LIMIT).catch((e: unknown) => e);
    expect((garbage as ConnectError).code).toBe(Code.InvalidArgument);
  });
});
