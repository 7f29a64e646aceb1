/**
 * /webhooks over HTTP: the secret is write-only, URLs are checked, and a
 * pending delivery survives a restart over the same state file (and key).
 */
import { afterEach, expect, test } from "bun:test";
import { createHmac, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "../../server/store/sqlite.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { until } from "../opamp/helpers.ts";
import { webhookReceiver } from "../webhooks/receiver.ts";

const SECRET = "receiver-secret-0123";
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function receiver(status: () => number) {
  const rx = webhookReceiver(status);
  cleanups.push(rx.stop);
  return rx;
}

test("create, list without the secret, refuse plain http to a remote host, delete (audited)", async () => {
  const server = await startTestServer();
  cleanups.push(() => server.stop());
  const created = await server.call<{ id: string; url: string; events: string[] }>("/webhooks", "POST", {
    url: "https://hooks.example.com/svc",
    events: ["rollout.failed", "collector.offline"],
    secret: SECRET,
  });
  expect(created.events).toEqual(["collector.offline", "rollout.failed"]);
  const listed = await server.api("/webhooks").then((r) => r.text());
  expect(listed).toContain(created.id);
  expect(listed).not.toContain(SECRET);
  const refused = await server.api("/webhooks", { method: "POST", json: { url: "http://hooks.example.com/svc", events: ["rollout.failed"], secret: SECRET } });
  expect(refused.status).toBe(400);
  const unknownEvent = await server.api("/webhooks", { method: "POST", json: { url: "https://h.example.com", events: ["rollout.exploded"], secret: SECRET } });
  expect(unknownEvent.status).toBe(400);
  expect((await server.call<{ items: unknown[] }>(`/webhooks/${created.id}/deliveries`)).items).toEqual([]);
  await server.call(`/webhooks/${created.id}`, "DELETE");
  expect((await server.api(`/webhooks/${created.id}/deliveries`)).status).toBe(404);
  const audit = await server.api("/audit?action=webhook.create").then((r) => r.text());
  expect(audit).toContain(created.id);
  expect(audit).not.toContain(SECRET);
});

test("a pending delivery survives a restart over the same state file", async () => {
  const dir = mkdtempSync(join(tmpdir(), "svc-hooks-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const env = { SVC_SECRETS_KEY: randomBytes(32).toString("base64"), SVC_WEBHOOKS_ALLOWPRIVATETARGETS: "true" };
  const open = () => new SqliteStore(join(dir, "state.db"));
  let up = false;
  const rx = receiver(() => (up ? 200 : 500));

  const first: TestServer = await startTestServer(env, open);
  const hook = await first.call<{ id: string }>("/webhooks", "POST", { url: rx.url, events: ["rollout.completed"], secret: SECRET });
  await first.app.webhooks.emit("rollout.completed", "r-restart", { rolloutId: "r-restart" });
  await until(async () => rx.got.length === 1, 20_000, 100, "the first delivery"); // the first attempt answers 500: a retry is queued
  await first.stop();

  up = true;
  const second = await startTestServer(env, open);
  cleanups.push(() => second.stop());
  await until(async () => rx.got.length === 2, 30_000, 100, "the retried delivery");
  const { body, signature } = rx.got[1]!;
  expect(body).toBe(rx.got[0]!.body);
  const [t, v1] = signature.split(",").map((p) => p.split("=")[1]!);
  expect(createHmac("sha256", SECRET).update(`${t}.${body}`).digest("hex")).toBe(v1!);
  // The admin was bootstrapped by the first run: its token still holds.
  const answer = await second.api(`/webhooks/${hook.id}/deliveries`, { token: first.adminToken });
  const log = ((await answer.json()) as { items: { attempt: number; status: string }[] }).items;
  expect(log.map((d) => [d.attempt, d.status])).toEqual([
    [2, "delivered"],
    [1, "failed"],
  ]);
}, 60_000);

test("an admin cannot aim a hook inside: metadata, link-local, private and loopback forms are each a 400 naming url", async () => {
  const server = await startTestServer();
  cleanups.push(() => server.stop());
  const own = `http://127.0.0.1:${new URL(server.base).port}/api/v1/collectors`;
  const inside = [
    "https://169.254.169.254/latest/meta-data/",
    "https://metadata.google.internal/computeMetadata/v1/",
    "https://[fd00:ec2::254]/",
    "https://[fe80::1]/",
    "https://10.0.0.1:6443/api",
    "https://192.168.0.1/",
    "https://172.16.0.1/",
    "https://100.64.0.1/",
    "https://127.0.0.1:2379/v2/keys",
    "https://[::1]/",
    "https://[::ffff:169.254.169.254]/",
    "https://[::ffff:127.0.0.1]/",
    "https://0.0.0.0/",
    "https://[ff02::1]/",
    own,
  ];
  for (const url of inside) {
    const res = await server.api("/webhooks", { method: "POST", json: { url, events: ["rollout.failed"], secret: SECRET } });
    const body = (await res.json()) as { error: { details: { path: string }[] } };
    expect([url, res.status, body.error.details.map((d) => d.path)]).toEqual([url, 400, ["url"]]);
  }
  expect((await server.call<{ items: unknown[] }>("/webhooks")).items).toEqual([]);
});

test("with webhooks.allowPrivateTargets a receiver on loopback gets its delivery", async () => {
  const server = await startTestServer({ SVC_WEBHOOKS_ALLOWPRIVATETARGETS: "true" });
  cleanups.push(() => server.stop());
  const rx = receiver(() => 200);
  await server.call("/webhooks", "POST", { url: rx.url, events: ["rollout.completed"], secret: SECRET });
  await server.app.webhooks.emit("rollout.completed", "r-local", { rolloutId: "r-local" });
  await until(async () => rx.got.length === 1, 20_000, 100, "the delivery");
  expect(JSON.parse(rx.got[0]!.body).data).toEqual({ rolloutId: "r-local" });
  // The metadata service stays out of reach even so.
  const res = await server.api("/webhooks", { method: "POST", json: { url: "https://169.254.169.254/", events: ["rollout.failed"], secret: SECRET } });
  expect(res.status).toBe(400);
});
