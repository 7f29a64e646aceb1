/**
 * Secrets in sensitive fields over the API, on the embedded store and on
 * PostgreSQL with two replicas sharing one key (a write on one, a read and a
 * keep on the other): a write sets or keeps a secret, every answer shows its
 * summary only, setting and clearing are audited without the value, and
 * neither the working tree, the history a writer exports, the audit log nor
 * the database itself holds the plaintext.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { paths, toYaml } from "../../server/configstore/layout.ts";
import { PostgresStore } from "../../server/store/postgres.ts";
import { testDatabases, type TestDatabases } from "../../server/store/testdb.ts";
import { startTestServer, tokenWithScopes, type TestServer } from "../harness.ts";
import type { ErrorBody } from "../../server/http/schemas.ts";

let pg: TestDatabases;
beforeAll(async () => {
  pg = await testDatabases();
});
afterAll(() => pg?.dropAll());

/** Distinct enough that finding it anywhere can only be a leak. */
const FIRST = "Bearer first-6f0c-plaintext";
const SECOND = "Bearer second-91d2-plaintext";
const OVERRIDE = "Bearer override-3ab7-plaintext";
const LEAKS = ["first-6f0c", "second-91d2", "override-3ab7"];

interface Deployment {
  /** Where writes go. */
  writer: TestServer;
  /** Another replica where one exists (reads and keeps there). */
  reader: TestServer;
  /** The whole database as a dump would show it. */
  dump(): Promise<string>;
  stop(): Promise<void>;
}

const backends: [string, () => Promise<Deployment>][] = [
  [
    "embedded (SQLite)",
    async () => {
      const server = await startTestServer();
      return {
        writer: server,
        reader: server,
        async dump() {
          // The raw files, write-ahead log included: a dump cannot show more than they hold.
          const files = readdirSync(server.dir).filter((f) => f.startsWith("state.db"));
          const raw = files.map((f) => readFileSync(join(server.dir, f)).toString("latin1")).join("\n");
          const proc = Bun.spawnSync(["sqlite3", join(server.dir, "state.db"), ".dump"]);
          if (proc.exitCode !== 0) throw new Error(`sqlite3 .dump: ${proc.stderr.toString()}`);
          return raw + proc.stdout.toString();
        },
        stop: () => server.stop(),
      };
    },
  ],
  [
    "external (PostgreSQL), two replicas",
    async () => {
      const uri = await pg.create(`secrets_${Math.random().toString(36).slice(2, 8)}`);
      const env = { SVC_SECRETS_KEY: randomBytes(32).toString("base64") };
      const writer = await startTestServer(env, () => PostgresStore.open(uri));
      const reader = await startTestServer(env, () => PostgresStore.open(uri));
      return {
        writer,
        reader,
        async dump() {
          const proc = Bun.spawnSync(["pg_dump", "--no-owner", uri]);
          if (proc.exitCode !== 0) throw new Error(`pg_dump: ${proc.stderr.toString()}`);
          return proc.stdout.toString();
        },
        async stop() {
          await reader.stop();
          await writer.stop();
        },
      };
    },
  ],
];

type Headers = Record<string, unknown>;
interface Destination {
  id: string;
  name: string;
  type: string;
  config: { endpoint: string; headers: Headers };
}

const SUMMARY = { secret: true, set: true, updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) };

function expectNoLeak(text: string): void {
  for (const leak of LEAKS) expect(text).not.toContain(leak);
}

async function git(cwd: string, ...args: string[]): Promise<string> {
  const proc = Bun.spawn(["git", ...args], { cwd, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`git ${args.join(" ")}: ${err}`);
  return out;
}

describe.each(backends)("secrets on %s", (_name, deploy) => {
  let d: Deployment;
  let viewer: string;
  beforeAll(async () => {
    d = await deploy();
    viewer = await tokenWithScopes(d.writer, ["config:read"]);
  });
  afterAll(() => d?.stop());

  /** Every text the API answers a call with is checked for plaintext. The admin token works on both replicas (one store). */
  async function call<T>(server: TestServer, path: string, method = "GET", json?: unknown, token = d.writer.adminToken): Promise<{ status: number; body: T }> {
    const res = await server.api(path, { method, json, token });
    const text = await res.text();
    expectNoLeak(text);
    return { status: res.status, body: (text === "" ? undefined : JSON.parse(text)) as T };
  }
  async function ok<T>(server: TestServer, path: string, method = "GET", json?: unknown): Promise<T> {
    const { status, body } = await call<T>(server, path, method, json);
    if (status < 200 || status >= 300) throw new Error(`${method} ${path} → ${status}: ${JSON.stringify(body)}`);
    return body;
  }
  async function refused(server: TestServer, path: string, method: string, json: unknown): Promise<ErrorBody["error"]> {
    const { status, body } = await call<ErrorBody>(server, path, method, json);
    expect({ status, code: body.error.code }).toEqual({ status: 400, code: "validation_failed" });
    return body.error;
  }
  /** A read on `server` once it shows what `ready` waits for: another replica learns of a write through the store's change feed, a moment later. */
  async function seen<T>(server: TestServer, path: string, ready: (body: T) => boolean): Promise<T> {
    for (const deadline = Date.now() + 5000; ; await Bun.sleep(20)) {
      const body = await ok<T>(server, path);
      if (ready(body) || Date.now() > deadline) return body;
    }
  }
  const pending = async () => (await ok<{ items: unknown[] }>(d.writer, "/changes")).items;
  const audited = async (action: string) =>
    (await ok<{ items: { resource: string; resourceId: string; details: Record<string, unknown> }[] }>(d.writer, `/audit?action=${action}&limit=1000`)).items;

  let destination: Destination;

  test("a destination's secret is sealed on create and every answer, on every replica and to a viewer, shows its summary", async () => {
    const headers = { Authorization: FIRST, "X-Scope-OrgID": { value: "team-a", secret: false }, "X-Api-Key": { env: "GW_API_KEY" } };
    destination = await ok<Destination>(d.writer, "/destinations", "POST", {
      name: "gw",
      type: "otlphttp",
      config: { endpoint: "https://gw.example.com:4318", headers },
    });
    const shown = { Authorization: SUMMARY, "X-Scope-OrgID": { value: "team-a", secret: false }, "X-Api-Key": { env: "GW_API_KEY" } };
    expect(destination.config.headers).toEqual(shown);
    const listed = await seen<{ items: Destination[] }>(d.reader, "/destinations", (body) => body.items.some((x) => x.id === destination.id));
    expect(listed.items.find((x) => x.id === destination.id)!.config.headers).toEqual(shown);
    expect((await ok<Destination>(d.reader, `/destinations/${destination.id}`)).config.headers).toEqual(shown);
    const asViewer = await call<Destination>(d.reader, `/destinations/${destination.id}`, "GET", undefined, viewer);
    expect(asViewer.body.config.headers).toEqual(shown);

    const set = await audited("secret.set");
    expect(set.map((e) => [e.resource, e.resourceId, e.details])).toEqual([["destination", destination.id, { path: "config.headers.Authorization" }]]);
    // The pending change names a version, not the value.
    const changes = await ok<{ diff: string }>(d.writer, "/changes");
    expect(changes.diff).toMatch(/\+\s+Authorization:\n\+\s+secret: [0-9a-f-]{36}\n/);
  });

  test("sending the read form back (from another replica) or the same value again changes nothing and audits nothing", async () => {
    await ok(d.writer, "/commit", "POST", { message: "gw" });
    const read = await ok<Destination>(d.reader, `/destinations/${destination.id}`);
    await ok(d.reader, `/destinations/${destination.id}`, "PUT", { name: read.name, type: read.type, config: read.config });
    expect(await pending()).toEqual([]);
    await ok(d.reader, `/destinations/${destination.id}`, "PUT", {
      name: read.name,
      type: read.type,
      config: { ...read.config, headers: { ...read.config.headers, Authorization: FIRST } },
    });
    expect(await pending()).toEqual([]);
    expect(await audited("secret.set")).toHaveLength(1);
  });

  test("a new value is a new version (secret.set), removing it a secret.clear; the history never holds a plaintext", async () => {
    const read = await ok<Destination>(d.writer, `/destinations/${destination.id}`);
    const updated = await ok<Destination>(d.writer, `/destinations/${destination.id}`, "PUT", {
      name: read.name,
      type: read.type,
      config: { ...read.config, headers: { ...read.config.headers, Authorization: SECOND } },
    });
    expect(updated.config.headers.Authorization).toEqual(SUMMARY);
    expect((await ok<{ items: { path: string; change: string }[] }>(d.writer, "/changes")).items.map(({ path, change }) => ({ path, change }))).toEqual([
      { path: `destinations/${destination.id}.yaml`, change: "modified" },
    ]);
    expect(await audited("secret.set")).toHaveLength(2);
    await ok(d.writer, "/commit", "POST", { message: "rotate the gateway key" });

    const { Authorization: _, ...rest } = read.config.headers;
    await ok(d.writer, `/destinations/${destination.id}`, "PUT", { name: read.name, type: read.type, config: { ...read.config, headers: rest } });
    const clear = await audited("secret.clear");
    expect(clear.map((e) => [e.resource, e.resourceId, e.details])).toEqual([["destination", destination.id, { path: "config.headers.Authorization" }]]);
    await ok(d.writer, "/commit", "POST", { message: "no key" });

    const res = await d.writer.api("/commits/export");
    expect(res.status).toBe(200);
    const bundle = join(d.writer.dir, "history.bundle");
    await Bun.write(bundle, await res.arrayBuffer());
    await git(d.writer.dir, "clone", "-q", bundle, "clone");
    const log = await git(join(d.writer.dir, "clone"), "log", "-p", "--all");
    expect(log).toContain("rotate the gateway key");
    expect(log).toContain("secret:");
    expectNoLeak(log);
  });

  test("keeping a secret where none is stored is a 400 naming the path; a bad value is refused without echoing it", async () => {
    const keep = { secret: true, set: true, updatedAt: "2024-01-01T00:00:00.000Z" };
    let error = await refused(d.writer, "/destinations", "POST", {
      name: "k",
      type: "otlphttp",
      config: { endpoint: "https://a:4318", headers: { Authorization: keep } },
    });
    expect(error.details.map((x) => x.path)).toEqual(["config.headers.Authorization"]);
    // Stored there: an env value, not a secret.
    const read = await ok<Destination>(d.writer, `/destinations/${destination.id}`);
    error = await refused(d.writer, `/destinations/${destination.id}`, "PUT", {
      name: read.name,
      type: read.type,
      config: { ...read.config, headers: { ...read.config.headers, "X-Api-Key": keep } },
    });
    expect(error.details.map((x) => x.path)).toEqual(["config.headers.X-Api-Key"]);
    error = await refused(d.writer, "/destinations", "POST", {
      name: "k",
      type: "otlphttp",
      config: { endpoint: "https://a:4318", headers: { Authorization: `${FIRST}\r\nX-Injected: 1` } },
    });
    expect(error.details.map((x) => x.path)).toEqual(["config.headers.Authorization"]);
    expect(await pending()).toEqual([]);
  });

  test("a collector's override takes the same forms: sealed, shown as a summary, kept when sent back, cleared on deactivation", async () => {
    const collector = await ok<{ id: string }>(d.writer, "/collectors", "POST", { name: `secrets-${Math.random().toString(36).slice(2, 8)}` });
    const base = `/collectors/${collector.id}/destinations`;
    const activation = await ok<{ configOverrides: { headers: Headers } }>(d.writer, base, "POST", {
      destinationId: destination.id,
      configOverrides: { headers: { Authorization: OVERRIDE } },
      tags: { tier: "gold" },
    });
    expect(activation.configOverrides).toEqual({ headers: { Authorization: SUMMARY } });
    const listed = (
      await seen<{ items: { destinationId: string; configOverrides: unknown; tags: unknown }[] }>(d.reader, base, (body) => body.items.length > 0)
    ).items;
    expect(listed).toEqual([{ destinationId: destination.id, configOverrides: { headers: { Authorization: SUMMARY } }, tags: { tier: "gold" } }]);
    const set = (await audited("secret.set")).filter((e) => e.resource === "collector");
    expect(set.map((e) => [e.resourceId, e.details])).toEqual([
      [collector.id, { path: "configOverrides.headers.Authorization", destinationId: destination.id }],
    ]);

    await ok(d.writer, "/commit", "POST", { message: "override" });
    await ok(d.reader, base, "POST", listed[0]);
    expect(await pending()).toEqual([]);
    const error = await refused(d.writer, base, "POST", {
      destinationId: destination.id,
      configOverrides: { headers: { Authorization: { secret: true }, "X-Other": { secret: true } } },
    });
    expect(error.details.map((x) => x.path)).toEqual(["configOverrides.headers.X-Other"]);

    await ok(d.writer, `${base}/${destination.id}`, "DELETE");
    const clear = (await audited("secret.clear")).filter((e) => e.resource === "collector");
    expect(clear.map((e) => [e.resourceId, e.details])).toEqual([
      [collector.id, { path: "configOverrides.headers.Authorization", destinationId: destination.id }],
    ]);
  });

  test("the audit log and the database hold no plaintext, and the vault holds every version", async () => {
    expectNoLeak(JSON.stringify(await ok(d.writer, "/audit?limit=1000")));
    expect(await d.writer.app.store.count("secrets")).toBe(3);
    expect(await d.writer.app.vault.open((await d.writer.app.store.list("secrets"))[0]!.id)).toBe(FIRST);
    const dump = await d.dump();
    expect(dump).toContain("svcsec:v1:");
    expectNoLeak(dump);
  });
});

describe("discarding back to a commit from before secrets were kept apart", () => {
  test("the plaintext that commit holds moves to the vault again at once", async () => {
    const server = await startTestServer();
    try {
      const destination = await server.call<{ id: string; name: string; type: string }>("/destinations", "POST", {
        name: "legacy",
        type: "otlphttp",
        config: { endpoint: "https://otlp.example.com" },
      });
      // What an older server committed: the header's plaintext in the file itself.
      const path = paths.destination(destination.id);
      const tree = await server.app.configStore.read(true);
      const legacy = { ...destination, config: { endpoint: "https://otlp.example.com", headers: { Authorization: FIRST } } };
      await server.app.configStore.edit([{ path, text: toYaml(legacy), expect: tree.version(path)! }], []);
      await server.call("/commit", "POST", { message: "from an older server" });
      await server.call(`/destinations/${destination.id}`, "PUT", { name: "renamed", type: "otlphttp", config: { endpoint: "https://otlp.example.com" } });

      await server.call("/changes/discard", "POST");
      const text = (await server.app.configStore.read(true)).keep(path).text!;
      expect(text).not.toContain("first-6f0c");
      expect(text).toMatch(/Authorization:\s+secret: [0-9a-f-]{36}/);
      const read = await server.call<{ config: { headers: Record<string, { updatedAt: string | null }> } }>(`/destinations/${destination.id}`);
      expect(typeof read.config.headers.Authorization!.updatedAt).toBe("string");
    } finally {
      await server.stop();
    }
  });
});
