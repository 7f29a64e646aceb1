/**
 * `history purge-secrets` and `drop-ref` on both history backends: a bare
 * repository on disk beside SQLite, and the history kept in PostgreSQL.
 * A history written before secrets were kept apart (plaintext header values
 * in a destination and in a collector's override) is upgraded the way the
 * server does it (the working tree's plaintext sealed into the vault), then
 * purged: plain git, the export bundle and the stored objects are checked for
 * the plaintext, before and after the kept ref is dropped.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { inflateSync } from "node:zlib";
import { parse } from "yaml";
import { auditEntry } from "../audit/audit.ts";
import { Secrets } from "../secrets/secrets.ts";
import { sealPlaintextInTree } from "./secrets-tree.ts";
import { SecretVault } from "../secrets/vault.ts";
import { PostgresStore } from "../store/postgres.ts";
import { SqliteStore } from "../store/sqlite.ts";
import type { Store, WriteOp } from "../store/store.ts";
import { testDatabases, type TestDatabases } from "../store/testdb.ts";
import { cleanupAfterEach } from "../testutil.ts";
import { ConfigStore } from "./configstore.ts";
import { paths, toYaml } from "./layout.ts";
import { beforePurgeRef, dropKeptRef, PlaintextInWorktreeError, purgeSecrets } from "./purge.ts";
import { OBJECTS } from "./repo-store.ts";
import { ConfigRepo } from "./repo.ts";

const who = { actor: "sa:tester", remoteAddr: null };
const SECRETS = ["Bearer first-secret-4b1d", "Bearer second-secret-9c2e", "Bearer override-secret-77aa", "tenant-7f3c"];
const [FIRST, SECOND, OVERRIDE, TENANT] = SECRETS as [string, string, string, string];

let pg: TestDatabases;
beforeAll(async () => {
  pg = await testDatabases();
});
afterAll(() => pg?.dropAll());
const { cleanups, tempDir } = cleanupAfterEach("svc-purge-");

function git(gitdir: string | null, ...args: string[]): string {
  const result = Bun.spawnSync(["git", ...(gitdir ? ["--git-dir", gitdir] : []), ...args]);
  if (result.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr.toString()}`);
  return result.stdout.toString();
}

interface Setup {
  store: Store;
  config: ConfigStore;
  vault: SecretVault;
  /** The bare repository on disk, for the disk backend. */
  gitdir: string | null;
}

async function onDisk(): Promise<Setup> {
  const dir = tempDir();
  const store = new SqliteStore(join(dir, "state.db"));
  const config = new ConfigStore(store, await ConfigRepo.open(join(dir, "config.git")));
  cleanups.push(async () => {
    config.close();
    await store.close();
  });
  return { store, config, vault: new SecretVault(store, new Secrets([randomBytes(32)])), gitdir: join(dir, "config.git") };
}

async function inPostgres(): Promise<Setup> {
  const store = await PostgresStore.open(await pg.create(`purge${Math.random().toString(36).slice(2, 8)}`));
  const config = new ConfigStore(store, ConfigRepo.inStore(store));
  cleanups.push(async () => {
    config.close();
    await store.close();
  });
  return { store, config, vault: new SecretVault(store, new Secrets([randomBytes(32)])), gitdir: null };
}

const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second));
const destination = (headers?: Record<string, unknown>) =>
  toYaml({ id: "d1", name: "backend", type: "otlphttp", config: { endpoint: "https://otlp.example.com", ...(headers ? { headers } : {}) } });
const activations = (overrides: Record<string, unknown>) =>
  toYaml({
    collectorId: "c1",
    sources: [{ sourceId: "s1", configOverrides: {} }],
    destinations: [{ destinationId: "d1", configOverrides: overrides }],
  });

/**
 * C0 has no secret; C1 adds plaintext headers; C2 changes one and adds an
 * override; then the working tree is upgraded as the server does at start
 * (each plaintext sealed once, in one edit with the vault versions).
 */
async function legacyHistory({ config, store, vault }: Setup) {
  const edit = (files: Record<string, string>) =>
    config.edit(
      Object.entries(files).map(([path, text]) => ({ path, text })),
      [],
    );
  await edit({
    [paths.source("s1")]: toYaml({ id: "s1", name: "logs", type: "filelog", config: { include: ["/var/log/*.log"] } }),
    [paths.destination("d1")]: destination(),
    [paths.activations("c1")]: activations({}),
  });
  const c0 = await config.commit({ ...who, name: "tester" }, "no secrets yet", at(0));
  await edit({ [paths.destination("d1")]: destination({ Authorization: FIRST, "X-Scope-OrgID": TENANT }) });
  const c1 = await config.commit(who, "add a bearer token", at(1));
  await edit({
    [paths.destination("d1")]: destination({ Authorization: SECOND, "X-Scope-OrgID": TENANT }),
    [paths.activations("c1")]: activations({ headers: { Authorization: OVERRIDE } }),
  });
  const c2 = await config.commit(who, "rotate the token, override it on c1", at(2));

  const ops: WriteOp[] = [];
  const ids = new Map<string, string>();
  const sealed = sealPlaintextInTree(await config.files(), (plaintext) => {
    if (!ids.has(plaintext)) {
      const { id, op } = vault.seal(plaintext, who);
      ids.set(plaintext, id);
      ops.push(op);
    }
    return ids.get(plaintext)!;
  });
  await config.edit(
    [...sealed].map(([path, text]) => ({ path, text })),
    [],
    ops,
  );
  // Records that name commits, as rollouts keep them.
  await store.write([
    { op: "put", collection: "collector_config", id: "c1", data: { collectorId: "c1", targetCommit: c2.commit, targetHash: "h2" } },
    { op: "put", collection: "config_history", id: "c1/0000000001", data: { seq: 1, commit: c0.commit } },
    { op: "put", collection: "config_history", id: "c1/0000000002", data: { seq: 2, commit: c2.commit } },
  ]);
  return { commits: [c0, c1, c2], worktreeIds: ids };
}

/** Every blob text the branch reaches. */
async function branchText(repo: ConfigRepo): Promise<string> {
  let text = "";
  for (const { commit } of await repo.log(null, 1000)) for (const oid of (await repo.tree(commit)).values()) text += (await repo.read(oid)) + "\n";
  return text;
}

/** The export bundle, cloned by real git: `git log -p --all` of the clone. */
async function exported(config: ConfigStore): Promise<string> {
  const dir = tempDir();
  writeFileSync(join(dir, "svc.bundle"), (await config.exportBundle(who)).bundle);
  git(null, "clone", "--quiet", "--mirror", join(dir, "svc.bundle"), join(dir, "clone.git"));
  return git(join(dir, "clone.git"), "log", "-p", "--all");
}

const holdsAny = (text: string) => SECRETS.filter((s) => text.includes(s));

for (const [name, setup] of [
  ["on disk", onDisk],
  ["in PostgreSQL", inPostgres],
] as const) {
  describe(`purge-secrets, history ${name}`, () => {
    test("rewrites every commit without plaintext, reusing the working tree's ids; drop-ref deletes what only the old head reached", async () => {
      const s = await setup();
      const { config, store, vault } = s;
      const repo = config.repo;
      const { commits, worktreeIds } = await legacyHistory(s);
      const before = await repo.log(null, 10);
      expect(holdsAny(await exported(config))).toEqual(SECRETS);
      expect((await config.changes()).items.length).toBe(2); // the upgrade's edit, not yet committed

      const outcome = (await purgeSecrets(config, store, vault, who, at(100)))!;
      expect(outcome.keptRef).toBe(beforePurgeRef(at(100)));
      expect(outcome.keptRef).toBe("refs/svc/before-purge-20260101T000140Z");
      expect(outcome.before).toBe(commits[2]!.commit);
      expect(outcome.values).toBe(4);
      expect(outcome.sealed).toBe(1); // FIRST: only the history had it
      expect(outcome.remapped).toBe(2);
      // The commit before any secret keeps its id; the others are new, with the same author, time and message.
      const after = await repo.log(null, 10);
      expect(after.map((c) => [c.message, c.author, c.time])).toEqual(before.map((c) => [c.message, c.author, c.time]));
      expect(after[2]!.commit).toBe(commits[0]!.commit);
      expect(after[1]!.commit).not.toBe(commits[1]!.commit);
      expect(after[0]!.commit).toBe(outcome.after);
      expect([...outcome.ids]).toEqual([
        [commits[1]!.commit, after[1]!.commit],
        [commits[2]!.commit, after[0]!.commit],
      ]);
      // The rewritten head names what the working tree names: nothing is pending but what was.
      expect((await config.changes()).items).toEqual([]);
      const head = await repo.tree(outcome.after);
      const headers = parse(await repo.read(head.get(paths.destination("d1"))!)).config.headers;
      expect(headers).toEqual({ Authorization: { secret: worktreeIds.get(SECOND) }, "X-Scope-OrgID": { secret: worktreeIds.get(TENANT) } });
      // The history-only value got one id of its own, which opens to it.
      const c1 = parse(await repo.read((await repo.tree(after[1]!.commit)).get(paths.destination("d1"))!)).config.headers;
      expect(c1["X-Scope-OrgID"]).toEqual({ secret: worktreeIds.get(TENANT) });
      expect(await vault.open(c1.Authorization.secret)).toBe(FIRST);

      expect(holdsAny(await branchText(repo))).toEqual([]);
      expect(holdsAny(await exported(config))).toEqual([]); // the export packs only what the branch reaches
      expect(await repo.keptRefs()).toEqual(new Map([[outcome.keptRef, commits[2]!.commit]]));
      if (s.gitdir) {
        expect(holdsAny(git(s.gitdir, "log", "-p", "main"))).toEqual([]);
        expect(holdsAny(git(s.gitdir, "log", "-p", "--all"))).toEqual(SECRETS); // until the kept ref is dropped
      }
      // Records name the new commits; the untouched one stays.
      expect((await store.get<{ targetCommit: string }>("collector_config", "c1"))!.data.targetCommit).toBe(outcome.after);
      expect((await store.list<{ commit: string }>("config_history")).map((d) => d.data.commit)).toEqual([commits[0]!.commit, outcome.after]);
      const [audit] = await store.queryAudit({ limit: 1, action: "config.purge_secrets" });
      expect(audit).toMatchObject({
        actor: who.actor,
        resourceId: outcome.after,
        details: { before: outcome.before, keptRef: outcome.keptRef, commits: 2, values: 4, sealed: 1 },
      });
      expect(holdsAny(JSON.stringify(await store.queryAudit({ limit: 100 })))).toEqual([]);

      // Nothing left to purge.
      expect(await purgeSecrets(config, store, vault, who, at(101))).toBeNull();

      // A publish on another replica, racing the purge, named an old commit: drop-ref points it at the new one first.
      await store.write([{ op: "put", collection: "rollouts", id: "r1", data: { commit: commits[1]!.commit } }]);
      if (s.gitdir) git(s.gitdir, "repack", "-a", "-d", "--quiet"); // packed objects, as `git gc` leaves them
      const dropped = await dropKeptRef(config, store, outcome.keptRef, who);
      expect(dropped.commit).toBe(commits[2]!.commit);
      expect(dropped.remapped).toBe(1);
      expect((await store.get<{ commit: string }>("rollouts", "r1"))!.data.commit).toBe(after[1]!.commit);
      expect(await repo.keptRefs()).toEqual(new Map());
      expect(await repo.log(null, 10)).toEqual(after);
      const reachable = new Set(await repo.objectIds(outcome.after));
      if (s.gitdir) {
        expect(dropped.objects).toBeGreaterThan(0);
        expect(holdsAny(git(s.gitdir, "cat-file", "--batch-all-objects", "--batch"))).toEqual([]);
        const stored = git(s.gitdir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)").trim().split("\n");
        expect(new Set(stored)).toEqual(reachable);
        expect(git(s.gitdir, "fsck", "--full", "--strict", "--no-dangling")).toBe("");
      } else {
        const objects = await store.list<{ deflated: string }>(OBJECTS);
        expect(objects.map((d) => d.id).sort()).toEqual([...reachable].sort());
        expect(holdsAny(objects.map((d) => inflateSync(Buffer.from(d.data.deflated, "base64")).toString("latin1")).join("\n"))).toEqual([]);
      }
      const [drop] = await store.queryAudit({ limit: 1, action: "config.drop_ref" });
      expect(drop).toMatchObject({ resourceId: commits[2]!.commit, details: { ref: outcome.keptRef } });
      await expect(dropKeptRef(config, store, outcome.keptRef, who)).rejects.toMatchObject({ status: 404 });

      // The history carries on from the new head.
      await config.edit([{ path: "sources/s2.yaml", text: toYaml({ id: "s2", name: "more", type: "filelog", config: { include: ["/x"] } }) }], []);
      expect((await config.commit(who, "after the purge")).parent).toBe(outcome.after);
    }, 60_000);

    test("refused while the working tree still holds plaintext (the server's start moves it first)", async () => {
      const s = await setup();
      await s.config.edit([{ path: paths.destination("d1"), text: destination({ Authorization: FIRST }) }], []);
      await s.config.commit(who, "legacy");
      await expect(purgeSecrets(s.config, s.store, s.vault, who)).rejects.toBeInstanceOf(PlaintextInWorktreeError);
      expect(await s.config.repo.keptRefs()).toEqual(new Map());
    });
  });
}

test("a commit landing while the history is rewritten wins: the rewrite moves nothing and keeps no ref", async () => {
  const uri = await pg.create("purgerace");
  const [one, two] = [await PostgresStore.open(uri), await PostgresStore.open(uri)];
  cleanups.push(
    () => one.close(),
    () => two.close(),
  );
  const [repo, other] = [ConfigRepo.inStore(one), ConfigRepo.inStore(two)];
  const author = { name: "sa:tester", email: "t@svc.invalid" };
  const base = await repo.commit(null, new Map([["a.yaml", "secret: 1\n"]]), "base", author);
  let landed = "";
  const rewrite = repo.rewrite(async (_c, tree) => new Map(tree.has("a.yaml") ? [["a.yaml", "secret: sealed\n"]] : []), {
    keepRef: "refs/svc/before-purge-x",
    beforeMove: async () => {
      landed = (await other.commit(base.commit, new Map([["b.yaml", "b\n"]]), "meanwhile", author)).commit;
    },
    audit: (r) => [auditEntry({ actor: "sa:tester", remoteAddr: null }, "config.purge_secrets", "commit", r.after)],
  });
  await expect(rewrite).rejects.toMatchObject({ status: 409, code: "head_moved" });
  expect(await repo.head()).toBe(landed);
  expect(await repo.keptRefs()).toEqual(new Map());
  expect(await one.count(OBJECTS)).toBe((await repo.objectIds(landed)).length);
  expect(await one.queryAudit({ limit: 10, action: "config.purge_secrets" })).toEqual([]);
});
