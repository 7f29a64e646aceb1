import { afterEach, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { SYSTEM_ACTOR } from "../audit/audit.ts";
import { ValidationError } from "../errors.ts";
import { Secrets } from "../secrets/secrets.ts";
import { SqliteStore } from "../store/sqlite.ts";
import { classifyAddress } from "./address.ts";
import { WebhookSender } from "./deliver.ts";
import { checkWebhookUrl, pinTarget, REFUSED_PRIVATE, type Lookup } from "./url.ts";
import { Webhooks } from "./webhooks.ts";

const SECRET = "s3cret-s3cret-s3cret";
const stops: (() => unknown)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

/** The path the 400 names, or null when the URL is accepted. */
function refusal(url: string, allowPrivate: boolean): string | null {
  try {
    checkWebhookUrl(url, allowPrivate);
    return null;
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return error.details.map((d) => d.path).join(",");
  }
}

/** Internal addresses: refused by default, allowed with webhooks.allowPrivateTargets. */
const INTERNAL = [
  "https://10.0.0.1:6443/api",
  "https://172.16.5.4/",
  "https://192.168.1.10/",
  "https://127.0.0.1:2379/",
  "https://2130706433/", // 127.0.0.1 as one number
  "https://0x7f.1/", // and in hex
  "https://[::1]/",
  "https://[::ffff:127.0.0.1]/",
  "https://[::ffff:10.0.0.1]/",
  "https://[fd12:3456::1]/",
  "https://100.64.0.1/",
  "https://198.18.0.1/",
  "https://198.19.255.254/",
  "https://[::ffff:0:10.0.0.1]/", // SIIT
  "https://[64:ff9b:1::8.8.8.8]/", // local-use NAT64
  "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", // Teredo (client 192.0.2.45, RFC 4380's example)
  "https://localhost/",
  "https://svc.localhost/",
];
/** Refused whatever the key says: cloud metadata, link-local, unspecified, multicast, reserved. */
const FORBIDDEN = [
  "https://169.254.169.254/latest/meta-data/",
  "https://[::ffff:169.254.169.254]/",
  "https://[::ffff:a9fe:a9fe]/",
  "https://[64:ff9b::169.254.169.254]/",
  "https://[fd00:ec2::254]/",
  "https://[fe80::1]/",
  "https://metadata.google.internal/computeMetadata/v1/",
  "https://metadata.google.internal./",
  "https://METADATA/",
  "https://100.100.100.200/",
  "https://0.0.0.0/",
  "https://[::]/",
  "https://224.0.0.1/",
  "https://[ff02::1]/",
  "https://255.255.255.255/",
  "https://192.0.0.170/", // NAT64 discovery (RFC 7050)
  "https://192.0.0.1/",
  "https://[::ffff:0:169.254.169.254]/", // SIIT
  "https://[64:ff9b:1::a9fe:a9fe]/", // local-use NAT64 of 169.254.169.254
  "https://[2001:0:4136:e378:8000:63bf:5601:5601]/", // Teredo, client 169.254.169.254
];

test("every internal and metadata address form is refused by default, naming url", () => {
  for (const url of [...INTERNAL, ...FORBIDDEN]) expect([url, refusal(url, false)]).toEqual([url, "url"]);
  // Plain http, to loopback (svc's own API) or anywhere.
  expect(refusal("http://127.0.0.1:8080/api/v1/collectors", false)).toBe("url");
  expect(refusal("http://localhost/", false)).toBe("url");
  expect(refusal("https://hooks.example.com/svc", false)).toBeNull();
  expect(refusal("https://8.8.8.8/", false)).toBeNull();
  expect(refusal("https://[2606:4700::1111]/", false)).toBeNull();
});

test("with allowPrivateTargets internal addresses and http to loopback are accepted; metadata and link-local still are not", () => {
  for (const url of INTERNAL) expect([url, refusal(url, true)]).toEqual([url, null]);
  for (const url of FORBIDDEN) expect([url, refusal(url, true)]).toEqual([url, "url"]);
  expect(refusal("http://127.0.0.1:8080/hook", true)).toBeNull();
  expect(refusal("http://[::1]:8080/hook", true)).toBeNull();
  expect(refusal("http://10.0.0.1/hook", true)).toBe("url"); // http stays loopback-only
  expect(refusal("https://user:pw@hooks.example.com/", true)).toBe("url");
});

test("address classes, including the IPv6 forms that carry an IPv4 address", () => {
  const cases: [string, string | null][] = [
    ["8.8.8.8", "public"],
    ["172.32.0.1", "public"],
    ["100.128.0.1", "public"],
    ["::ffff:8.8.8.8", "public"],
    ["192.0.1.1", "public"],
    ["198.17.255.255", "public"],
    ["198.20.0.1", "public"],
    ["2001:db8::1", "public"], // documentation, but not Teredo: 2001:0::/32 only
    ["::ffff:0:8.8.8.8", "public"], // SIIT of a public address
    ["::ffff:0:127.0.0.1", "internal"],
    ["192.0.0.9", "forbidden"],
    ["198.18.0.0", "internal"],
    ["64:ff9b:1::8.8.8.8", "internal"], // local-use NAT64: never public, whatever it carries
    ["64:ff9b:1:ffff::808:808", "internal"],
    ["64:ff9b:1::a9fe:a9fe", "forbidden"],
    ["2001:0:4136:e378:8000:63bf:f7f7:f7f7", "internal"], // Teredo, client 8.8.8.8: never public
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "internal"],
    ["2001:0:4136:e378:8000:63bf:5601:5601", "forbidden"],
    ["2002:a9fe:a9fe::1", "forbidden"], // 6to4 of 169.254.169.254
    ["::127.0.0.1", "internal"],
    ["fe80::1%eth0", "forbidden"],
    ["fec0::1", "internal"],
    ["not-an-ip", null],
  ];
  for (const [address, cls] of cases) expect([address, classifyAddress(address)]).toEqual([address, cls]);
});

test("at delivery, a name is refused when any address it resolves to is not allowed, else pinned to the address checked", async () => {
  const resolving = (addresses: string[]) => async () => addresses;
  const refused = { refused: REFUSED_PRIVATE };
  expect(await pinTarget("https://hooks.example.com/svc?x=1", false, resolving(["93.184.215.14"]))).toEqual({
    url: "https://93.184.215.14/svc?x=1",
    host: "hooks.example.com",
    serverName: "hooks.example.com",
  });
  expect(await pinTarget("https://hooks.example.com:8443/", false, resolving(["2606:2800::1", "93.184.215.14"]))).toEqual({
    url: "https://[2606:2800::1]:8443/",
    host: "hooks.example.com:8443",
    serverName: "hooks.example.com",
  });
  expect(await pinTarget("https://hooks.example.com/", false, resolving(["93.184.215.14", "10.1.2.3"]))).toEqual(refused);
  expect(await pinTarget("https://rebind.example.com/", false, resolving(["::ffff:169.254.169.254"]))).toEqual(refused);
  expect(await pinTarget("https://rebind.example.com/", true, resolving(["169.254.169.254"]))).toEqual(refused);
  expect(await pinTarget("https://relay.internal/", true, resolving(["10.1.2.3"]))).toMatchObject({ url: "https://10.1.2.3/" });
  expect(await pinTarget("https://nothing.example.com/", false, resolving([]))).toEqual(refused);
  // A literal address needs no lookup and no pin.
  expect(await pinTarget("https://8.8.8.8/x", false, resolving(["10.0.0.1"]))).toEqual({ url: "https://8.8.8.8/x" });
  expect(await pinTarget("https://127.0.0.1/x", false, resolving([]))).toEqual(refused);
});

test("the delivery connects to the address that was checked, not to what the name resolves to when fetch connects", async () => {
  const store = new SqliteStore(":memory:");
  stops.push(() => store.close());
  const hosts: string[] = [];
  // Listening on 127.0.0.2 only: the system's answer for localhost (127.0.0.1, ::1) does not reach it.
  const rx = Bun.serve({ hostname: "127.0.0.2", port: 0, fetch: (req) => (hosts.push(req.headers.get("host") ?? ""), new Response("")) });
  stops.push(() => rx.stop(true));
  const hooks = new Webhooks(store, new Secrets([randomBytes(32)]), Date.now, true);
  const hook = await hooks.create(SYSTEM_ACTOR, { url: `http://localhost:${rx.port}/hook`, events: ["rollout.completed"], secret: SECRET });
  await hooks.emit("rollout.completed", "r1", {});
  await new WebhookSender(store, hooks, pino({ level: "silent" }), { lookup: async () => ["127.0.0.2"] }).tick();
  expect((await hooks.deliveries(hook.id))[0]).toMatchObject({ status: "delivered", httpStatus: 200 });
  expect(hosts).toEqual([`localhost:${rx.port}`]);
});

test("https to a pinned address: SNI and the certificate check are the name's", async () => {
  const dir = mkdtempSync(join(tmpdir(), "svc-hook-tls-"));
  stops.push(() => rmSync(dir, { recursive: true, force: true }));
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
      "/CN=hooks.test",
      "-addext",
      "subjectAltName=DNS:hooks.test",
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem"),
    ],
    { stdout: "ignore", stderr: "ignore" },
  );
  expect(await openssl.exited).toBe(0);
  const child = Bun.spawn([process.execPath, join(import.meta.dir, "testdata/pinned-tls-delivery.ts"), dir], {
    env: { ...process.env, NODE_EXTRA_CA_CERTS: join(dir, "cert.pem") },
    stdout: "pipe",
    stderr: "pipe",
  });
  const out = await new Response(child.stdout).text();
  expect(await child.exited).toBe(0);
  const { results, hosts, port } = JSON.parse(out) as { results: Record<string, { status: string; error: string | null }>; hosts: string[]; port: number };
  // Connected to 127.0.0.1, verified as hooks.test; a certificate for another name is refused.
  expect(results["hooks.test"]).toEqual({ status: "delivered", error: null });
  expect(results["wrong.test"]!.status).toBe("failed");
  expect(results["wrong.test"]!.error).toContain("ERR_TLS_CERT_ALTNAME_INVALID");
  expect(hosts).toEqual([`hooks.test:${port}`]);
});

test("a hook whose host resolves to loopback is logged as refused and never reached unless allowPrivateTargets", async () => {
  const store = new SqliteStore(":memory:");
  stops.push(() => store.close());
  let hits = 0;
  const rx = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => (hits++, new Response("")) });
  stops.push(() => rx.stop(true));
  const logger = pino({ level: "silent" });
  const secrets = new Secrets([randomBytes(32)]);
  // Saved while the key was on (or a name that resolved elsewhere then); the key is now off.
  const permissive = new Webhooks(store, secrets, Date.now, true);
  const strict = new Webhooks(store, secrets, Date.now, false);
  const hook = await permissive.create(SYSTEM_ACTOR, { url: `http://localhost:${rx.port}/hook`, events: ["rollout.completed"], secret: SECRET });
  await strict.emit("rollout.completed", "r1", {});
  await new WebhookSender(store, strict, logger).tick();
  expect(hits).toBe(0);
  const [entry] = await strict.deliveries(hook.id);
  expect(entry).toMatchObject({ status: "failed", httpStatus: null, error: REFUSED_PRIVATE });

  await permissive.emit("rollout.completed", "r2", {});
  await new WebhookSender(store, permissive, logger).tick();
  expect(hits).toBe(1);
  expect((await permissive.deliveries(hook.id))[0]).toMatchObject({ status: "delivered", httpStatus: 200 });
});

test("a resolver that never answers fails the attempt at the delivery timeout, logged, and the sender goes on", async () => {
  const store = new SqliteStore(":memory:");
  stops.push(() => store.close());
  const hooks = new Webhooks(store, new Secrets([randomBytes(32)]), Date.now, true);
  const hook = await hooks.create(SYSTEM_ACTOR, { url: "https://hooks.example.test/svc", events: ["rollout.completed"], secret: SECRET });
  await hooks.emit("rollout.completed", "r1", {});
  const never: Lookup = () => new Promise(() => undefined);
  await new WebhookSender(store, hooks, pino({ level: "silent" }), { lookup: never, timeoutMs: 200 }).tick();
  expect((await hooks.deliveries(hook.id))[0]).toMatchObject({ status: "failed", httpStatus: null });
});
