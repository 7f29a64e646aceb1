/**
 * GET /collectors/{id}/config-history/{seq}: each pushed version's rendered
 * body, so the UI can diff any version against the one before it; unknown
 * versions and collectors are 404.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { deploymentKit } from "../../test/deployment.ts";
import { startTestServer, type TestServer } from "../../test/harness.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

interface Version {
  seq: number;
  hash: string;
  commit: string;
  contentType: string;
  body: string;
}

test("each version's body is the config pushed at that version", async () => {
  const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);
  const routeThrough = await deploymentKit(call);
  const { id } = await call<{ id: string }>("/collectors", "POST", { name: "versions" });
  await routeThrough(id, "/var/log/one/*.log");
  await call("/commit", "POST", { message: "one" });
  await call(`/publish/${id}`, "POST");
  const [active] = (await call<{ items: { sourceId: string }[] }>(`/collectors/${id}/sources`)).items;
  await call(`/collectors/${id}/sources`, "POST", { sourceId: active!.sourceId, configOverrides: { include: ["/var/log/two/*.log"] } });
  await call("/commit", "POST", { message: "two" });
  await call(`/publish/${id}`, "POST");

  const { items } = await call<{ items: { seq: number; hash: string }[] }>(`/collectors/${id}/config-history`);
  const [one, two] = await Promise.all([1, 2].map((seq) => call<Version>(`/collectors/${id}/config-history/${seq}`)));
  expect(one).toMatchObject({ seq: 1, hash: items[0]!.hash, contentType: "text/yaml" });
  expect(one!.body).toContain("/var/log/one/*.log");
  expect(two).toMatchObject({ seq: 2, hash: items[1]!.hash });
  expect(two!.body).toContain("/var/log/two/*.log");
  expect(two!.body).not.toContain("/var/log/one/*.log");

  const missing = await server.api(`/collectors/${id}/config-history/3`);
  expect(missing.status).toBe(404);
  expect(((await missing.json()) as { error: { code: string } }).error.code).toBe("not_found");
  expect((await server.api("/collectors/0190c3c0-0000-7000-8000-000000000000/config-history/1")).status).toBe(404);
});
