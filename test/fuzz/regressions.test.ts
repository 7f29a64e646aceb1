/**
 * Bad inputs the fuzzers in this folder found, kept as plain cases so they
 * stay fixed whatever seeds the fuzzers draw next time.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../harness.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

async function post(path: string, body: string): Promise<{ status: number; error: { code: string; message: string } }> {
  const res = await server.api(path, { method: "POST", body, headers: { "Content-Type": "application/json" } });
  return { status: res.status, ...((await res.json()) as { error: { code: string; message: string } }) };
}

test("a component config nested 100,000 deep is a 400 naming the limit, not a 500 from a stack overflow", async () => {
  const config = '{"a":'.repeat(100_000) + "1" + "}".repeat(100_000);
  const answer = await post("/sources", `{"name":"deep","type":"filelog","config":${config}}`);
  expect(answer.status).toBe(400);
  expect(answer.error.code).toBe("too_deeply_nested");
  expect(answer.error.message).toContain("1000 levels");
  expect((await server.call<{ items: unknown[] }>("/sources")).items).toEqual([]);
});

test("nesting up to the limit is still read (OTLP values nest 100 deep, about 400 levels of JSON)", async () => {
  const config = '{"a":'.repeat(999) + "1" + "}".repeat(999);
  const answer = await post("/sources", `{"name":"deep","type":"filelog","config":${config}}`);
  expect(answer.status).toBe(400);
  expect(answer.error.code).toBe("validation_failed");
});

test("a body refused for its size closes the connection, so the unread upload cannot hold it (or a graceful stop) open", async () => {
  const pipeline = await server.call<{ id: string }>("/pipelines", "POST", { name: "big", signal: "logs" });
  const res = await server.api(`/pipelines/${pipeline.id}/topology`, { method: "PUT", body: "x".repeat(2 * 1024 * 1024), headers: { "Content-Type": "application/json" } });
  expect(res.status).toBe(413);
  expect(res.headers.get("connection")).toBe("close");
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
});
