/**
 * The maintenance commands end to end, as an operator runs them:
 * `svc-server history purge-secrets`, `history refs`, `history drop-ref` and
 * `secrets rotate-key`, on a server's embedded state (stopped, under the
 * state lock) and on a PostgreSQL store a replica keeps serving from. The
 * history holds a credential committed before secrets were kept apart and
 * published after; afterwards neither plain git, nor the export bundle, nor
 * the stored objects hold it, config history names commits of the branch,
 * and the collector's sealed token still opens after the key is rotated.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inflateSync } from "node:zlib";
import pino from "pino";
import { parse } from "yaml";
import { createApp } from "../../server/app.ts";
import { loadConfig } from "../../server/config/load.ts";
import { paths, toYaml } from "../../server/configstore/layout.ts";
import { OBJECTS } from "../../server/configstore/repo-store.ts";
import { defaultKeyFile, NEXT_KEY_SUFFIX, PREVIOUS_KEY_SUFFIX } from "../../server/secrets/key.ts";
import { keyId } from "../../server/secrets/secrets.ts";
import { lockState } from "../../server/store/state-lock.ts";
import { PostgresStore } from "../../server/store/postgres.ts";
import { SqliteStore } from "../../server/store/sqlite.ts";
import { testDatabases, type TestDatabases } from "../../server/store/testdb.ts";
import { deploymentKit } from "../deployment.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { cli } from "./spawn.ts";

const CREDENTIAL = "Bearer legacy-credential-5e0f1d";

let pg: TestDatabases;
const dirs: string[] = [];
beforeAll(async () => {
  pg = await testDatabases();
});
afterAll(async () => {
  await pg?.dropAll();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function git(gitdir: string | null, ...args: string[]): string {
  const result = Bun.spawnSync(["git", ...(gitdir ? ["--git-dir", gitdir] : []), ...args]);
  if (result.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr.toString()}`);
  return result.stdout.toString();
}

/** `git log -p --all` of a clone of GET /commits/export. */
async function exportedLog(server: TestServer): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "svc-export-"));
  dirs.push(dir);
  const res = await server.api("/commits/export");
  expect(res.status).toBe(200);
  writeFileSync(join(dir, "svc.bundle"), new Uint8Array(await res.arrayBuffer()));
  git(null, "clone", "--quiet", "--mirror", join(dir, "svc.bundle"), join(dir, "clone.git"));
  return git(join(dir, "clone.git"), "log", "-p", "--all");
}

/**
 * A published configuration whose history holds CREDENTIAL: committed in a
 * destination's header (as before secrets were kept apart, written to the
 * tree directly), then taken out again and published.
 */
async function legacyDeployment(server: TestServer) {
  const call = server.call.bind(server);
  const route = await deploymentKit(call);
  const collector = await call<{ id: string }>("/collectors", "POST", { name: "edge-1" });
  await route(collector.id);
  await call("/commit", "POST", { message: "first config" });
  const destinationId = (await call<{ items: { id: string }[] }>("/destinations")).items[0]!.id;
  const path = paths.destination(destinationId);
  const record = parse((await server.app.configStore.files()).get(path)!);
  await server.app.configStore.edit([{ path, text: toYaml({ ...record, config: { ...record.config, headers: { Authorization: CREDENTIAL } } }) }], []);
  await call("/commit", "POST", { message: "send the backend's token" });
  await server.app.configStore.edit([{ path, text: toYaml(record) }], []);
  await call("/commit", "POST", { message: "the backend needs no token" });
  await call("/publish", "POST", {});
  const { token } = await call<{ token: string }>(`/collectors/${collector.id}/otlp-token`, "POST");
  const commits = (await call<{ items: { commit: string }[] }>("/commits")).items.map((c) => c.commit);
  return { collectorId: collector.id, token, commits };
}

/** The commits of GET /commits, and those each config history entry names (there is one: the publish). */
async function commitsNamed(server: TestServer, collectorId: string) {
  const branch = (await server.call<{ items: { commit: string }[] }>("/commits")).items.map((c) => c.commit);
  const { items } = await server.call<{ items: { commit: string }[] }>(`/collectors/${collectorId}/config-history`);
  expect(items).toHaveLength(1);
  return { branch, named: items.map((e) => e.commit) };
}

describe("history purge-secrets, drop-ref and secrets rotate-key", () => {
  test("embedded: on the stopped server's state; refused while it runs", async () => {
    const server = await startTestServer();
    dirs.push(server.dir);
    const { collectorId, token, commits } = await legacyDeployment(server);
    expect(await exportedLog(server)).toContain(CREDENTIAL);
    await server.http.stop();
    await server.app.stop();
    await server.app.store.close();

    const boltPath = join(server.dir, "state.db");
    const gitdir = join(server.dir, "config.git");
    const configPath = join(server.dir, "config.yaml");
    writeFileSync(configPath, `storage:\n  boltPath: ${boltPath}\n`);
    const lock = lockState(boltPath);
    const refused = await cli(["history", "purge-secrets", "-c", configPath]);
    lock.release();
    expect(refused.code).toBe(1);
    expect(refused.err).toContain("in use by another svc server");

    const purged = await cli(["history", "purge-secrets", "-c", configPath]);
    expect(purged.err).toBe("");
    expect(purged.code).toBe(0);
    expect(purged.out).toContain(`rewrote 2 commit(s): the branch moved from ${commits[0]} to `);
    const keptRef = /svc-server history drop-ref (refs\/svc\/before-purge-\d{8}T\d{6}Z)/.exec(purged.out)![1]!;
    expect(git(gitdir, "log", "-p", "main")).not.toContain(CREDENTIAL);
    expect(git(gitdir, "log", "-p", "--all")).toContain(CREDENTIAL);
    expect((await cli(["history", "refs", "-c", configPath])).out).toBe(`${commits[0]} ${keptRef}\n`);
    expect((await cli(["history", "purge-secrets", "-c", configPath])).out).toContain("the history is unchanged");

    const unknown = await cli(["history", "drop-ref", "refs/svc/nope", "-c", configPath]);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain(`kept refs: ${keptRef}`);
    const dropped = await cli(["history", "drop-ref", keptRef, "-c", configPath]);
    expect(dropped.err).toBe("");
    expect(dropped.out).toMatch(new RegExp(`^deleted ${keptRef} \\(${commits[0]}\\) and the \\d+ object\\(s\\) no other ref reaches`));
    expect(git(gitdir, "cat-file", "--batch-all-objects", "--batch")).not.toContain(CREDENTIAL);
    expect(git(gitdir, "fsck", "--full", "--strict", "--no-dangling")).toBe("");

    const keyFile = defaultKeyFile(boltPath);
    const oldKey = readFileSync(keyFile, "utf8");
    const rotated = await cli(["secrets", "rotate-key", "-c", configPath]);
    expect(rotated.err).toBe("");
    expect(rotated.code).toBe(0);
    expect(rotated.out).toMatch(/^re-sealed [1-9]\d* secret\(s\) under key [0-9a-f]{16} \([1-9]\d* from key [0-9a-f]{16}\)\.$/m);
    expect(rotated.out).toContain(`${keyFile} now holds key `);
    expect(readFileSync(keyFile, "utf8")).not.toBe(oldKey);
    expect(existsSync(keyFile + NEXT_KEY_SUFFIX)).toBe(false);

    // The server starts again on it: the token opens with the new key, config history names the branch's commits.
    const config = loadConfig({ path: configPath, env: { SVC_LISTEN: "127.0.0.1:0", SVC_LOGGING_LEVEL: "silent" } });
    const store = new SqliteStore(boltPath);
    const app = await createApp(config, store, pino({ level: "silent" }));
    try {
      expect(await app.collectorTokens.current(collectorId)).toBe(token);
      const branch = (await app.configStore.commits(10)).items.map((c) => c.commit);
      expect(branch).toHaveLength(3);
      expect(branch[2]).toBe(commits[2]); // before the credential: unchanged
      const history = await app.targetHistory.history(collectorId);
      expect(history.map((e) => e.commit)).toEqual([branch[0]!]); // published at the head, which was rewritten
      const actions = (await store.queryAudit({ limit: 20 })).filter((e) => e.actor.startsWith("cli:")).map((e) => e.action);
      expect(actions).toEqual(["secrets.rotate_key", "config.drop_ref", "config.purge_secrets"]);
      expect(JSON.stringify(await store.queryAudit({ limit: 100 }))).not.toContain(CREDENTIAL);
    } finally {
      await app.stop();
      await store.close();
    }
  }, 90_000);

  test("external (PostgreSQL): beside a running replica, which serves the rewritten history; rotation in the README's steps", async () => {
    const uri = await pg.create("historycli");
    const dir = mkdtempSync(join(tmpdir(), "svc-history-cli-"));
    dirs.push(dir);
    const keyFile = join(dir, "secrets.key");
    const [k1, k2] = [randomBytes(32), randomBytes(32)];
    writeFileSync(keyFile, k1.toString("base64"), { mode: 0o600 });
    const configPath = join(dir, "config.yaml");
    writeFileSync(
      configPath,
      `storage:\n  backend: external\n  boltPath: ${join(dir, "state.db")}\ndatabase:\n  uri: ${uri}\nsecrets:\n  keyFile: ${keyFile}\n`,
    );
    const replica = await startTestServer({ SVC_SECRETS_KEYFILE: keyFile }, () => PostgresStore.open(uri));
    dirs.push(replica.dir);
    try {
      const { collectorId, commits } = await legacyDeployment(replica);

      const purged = await cli(["history", "purge-secrets", "-c", configPath]);
      expect(purged.err).toBe("");
      expect(purged.code).toBe(0);
      const keptRef = /svc-server history drop-ref (\S+)/.exec(purged.out)![1]!;
      // The running replica serves the new history at once, and config history names its commits.
      const { branch, named } = await commitsNamed(replica, collectorId);
      expect(branch[0]).not.toBe(commits[0]);
      expect(named).toEqual([branch[0]!]);
      expect(await exportedLog(replica)).not.toContain(CREDENTIAL);

      const dropped = await cli(["history", "drop-ref", keptRef, "-c", configPath]);
      expect(dropped.err).toBe("");
      expect(dropped.code).toBe(0);
      const objects = await replica.app.store.list<{ deflated: string }>(OBJECTS);
      expect(objects.map((d) => inflateSync(Buffer.from(d.data.deflated, "base64")).toString("latin1")).join("\n")).not.toContain(CREDENTIAL);
      expect(objects).toHaveLength((await replica.app.configStore.repo.objectIds(branch[0]!)).length);
      // The replica keeps committing on the new head.
      await replica.call("/collectors", "POST", { name: "edge-2" });
      await replica.call("/sources", "POST", { name: "more", type: "filelog", config: { include: ["/var/log/more/*.log"] } });
      expect((await replica.call<{ parent: string }>("/commit", "POST", { message: "after the purge" })).parent).toBe(branch[0]!);

      // Rotation: a key other than the configured one is refused; once the key files say seal with K2 and keep K1 as .previous
      // (README steps 1 and 2; this replica is stopped before it would need them), the rest is re-sealed.
      writeFileSync(join(dir, "k2"), k2.toString("base64"), { mode: 0o600 });
      const refusedKey = await cli(["secrets", "rotate-key", "--new-key-file", join(dir, "k2"), "-c", configPath]);
      expect(refusedKey.code).toBe(1);
      expect(refusedKey.err).toContain("README");
      writeFileSync(keyFile + NEXT_KEY_SUFFIX, k2.toString("base64"), { mode: 0o600 });
      renameSync(keyFile, keyFile + PREVIOUS_KEY_SUFFIX);
      renameSync(keyFile + NEXT_KEY_SUFFIX, keyFile);
      const rotated = await cli(["secrets", "rotate-key", "-c", configPath]);
      expect(rotated.code).toBe(0);
      expect(rotated.out).toMatch(new RegExp(`^re-sealed [1-9]\\d* secret\\(s\\) under key ${keyId(k2)} \\([1-9]\\d* from key ${keyId(k1)}\\)`, "m"));
      rmSync(keyFile + PREVIOUS_KEY_SUFFIX);
    } finally {
      await replica.stop();
    }
    const restarted = await startTestServer({ SVC_SECRETS_KEYFILE: keyFile }, () => PostgresStore.open(uri));
    dirs.push(restarted.dir);
    try {
      const [entry] = await restarted.app.store.queryAudit({ limit: 1, action: "secrets.rotate_key" });
      expect(entry!.details).toMatchObject({ to: keyId(k2), from: { [keyId(k1)]: expect.any(Number) } });
      const current = await restarted.app.store.list<{ sealed: string }>("collector_tokens");
      expect(current.every((d) => d.data.sealed.includes(keyId(k2)))).toBe(true);
    } finally {
      await restarted.stop();
    }
  }, 90_000);
});
