/**
 * The store-backed history against a real PostgreSQL (a fresh database per
 * test, see store/testdb.ts): what one replica commits every other one sees
 * at once, concurrent commits give one winner and one 409 head_moved with
 * nothing half-written, and a copied history is the same git history.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ConflictError } from "../errors.ts";
import { PostgresStore } from "../store/postgres.ts";
import { type TestDatabases, testDatabases } from "../store/testdb.ts";
import { auditEntry } from "../audit/audit.ts";
import type { AuditEntry } from "../store/store.ts";
import { cleanupAfterEach } from "../testutil.ts";
import { ConfigRepo, type CommitInfo } from "./repo.ts";
import { OBJECTS } from "./repo-store.ts";

const author = { name: "sa:tester", email: "sa-tester@svc.invalid" };
let pg: TestDatabases;
let databases = 0;
const { cleanups, tempDir } = cleanupAfterEach("svc-repo-");

beforeAll(async () => {
  pg = await testDatabases();
});
afterAll(() => pg?.dropAll());

async function database(): Promise<string> {
  return pg.create(`repo${++databases}`);
}

/** One replica: its own store connection and repository on the shared database. */
async function replica(uri: string) {
  const store = await PostgresStore.open(uri);
  cleanups.push(() => store.close());
  return { store, repo: ConfigRepo.inStore(store) };
}

async function git(gitdir: string, ...args: string[]): Promise<string> {
  const proc = Bun.spawn(["git", "--git-dir", gitdir, ...args], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`git ${args.join(" ")}: ${err}`);
  return out;
}

const changes = (entries: Record<string, string | null>) => new Map(Object.entries(entries));

/** An audit builder for a commit, as ConfigStore passes one. */
function audited(label: string) {
  return (commit: CommitInfo): AuditEntry[] => [auditEntry({ actor: "sa:tester", remoteAddr: null }, "config.commit", "commit", commit.commit, { label })];
}

describe("store-backed config repository", () => {
  test("commit, log, tree and read; another replica sees the commit at once", async () => {
    const uri = await database();
    const one = await replica(uri);
    const two = await replica(uri);
    expect(await one.repo.head()).toBeNull();
    expect(await one.repo.log(null, 10)).toEqual([]);

    const first = await one.repo.commit(null, changes({ "sources/a.yaml": "id: a\n", "pipelines/p/x.yaml": "id: x\n" }), "first", author);
    const second = await one.repo.commit(first.commit, changes({ "sources/a.yaml": "id: a\nname: A\n", "pipelines/p/x.yaml": null }), "second", author);

    expect(await two.repo.head()).toBe(second.commit);
    const log = await two.repo.log(null, 10);
    expect(log.map((c) => [c.commit, c.message, c.parent])).toEqual([
      [second.commit, "second", first.commit],
      [first.commit, "first", null],
    ]);
    const tree = await two.repo.tree(second.commit);
    expect([...tree.keys()]).toEqual(["sources/a.yaml"]);
    expect(await two.repo.read(tree.get("sources/a.yaml")!)).toBe("id: a\nname: A\n");
    expect([...(await two.repo.tree(first.commit)).keys()].sort()).toEqual(["pipelines/p/x.yaml", "sources/a.yaml"]);
  });

  test("two replicas committing from the same parent: one wins, the other gets head_moved and writes nothing", async () => {
    const uri = await database();
    const one = await replica(uri);
    const two = await replica(uri);
    const base = await one.repo.commit(null, changes({ "a.yaml": "a\n" }), "base", author);

    const results = await Promise.allSettled([
      one.repo.commit(base.commit, changes({ "b.yaml": "from one\n", "dir/c.yaml": "one\n" }), "one", author, undefined, audited("one")),
      two.repo.commit(base.commit, changes({ "b.yaml": "from two\n", "dir/d.yaml": "two\n" }), "two", author, undefined, audited("two")),
    ]);
    const won = results.filter((r) => r.status === "fulfilled");
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]!.reason).toBeInstanceOf(ConflictError);
    expect(lost[0]!.reason).toMatchObject({ status: 409, code: "head_moved" });

    const head = (won[0] as PromiseFulfilledResult<{ commit: string }>).value.commit;
    expect(await one.repo.head()).toBe(head);
    expect(await two.repo.head()).toBe(head);
    // Nothing half-written: every stored object is reachable from the head.
    expect(await one.store.count(OBJECTS)).toBe((await one.repo.objectIds(head)).length);
    // The winner's audit entry was stored with its commit, atomically; the loser left none.
    expect((won[0] as PromiseFulfilledResult<{ audited: boolean }>).value.audited).toBe(true);
    const entries = await one.store.queryAudit({ limit: 10 });
    expect(entries.map((e) => e.resourceId)).toEqual([head]);

    // The loser commits again on the new head.
    const loser = results[0]!.status === "rejected" ? one : two;
    const retry = await loser.repo.commit(head, changes({ "e.yaml": "again\n" }), "retry", author);
    expect((await one.repo.log(null, 10)).map((c) => c.commit)).toEqual([retry.commit, head, base.commit]);
    expect(await one.store.count(OBJECTS)).toBe((await one.repo.objectIds(retry.commit)).length);
  });

  test("history survives closing and reopening the store", async () => {
    const uri = await database();
    const first = await replica(uri);
    const done = await first.repo.commit(null, changes({ "a.yaml": "kept\n" }), "kept", author);
    await first.store.close();

    const again = await replica(uri);
    expect(await again.repo.head()).toBe(done.commit);
    const [entry] = await again.repo.log(null, 1);
    expect(entry).toMatchObject({ commit: done.commit, message: "kept", author: "sa:tester", parent: null });
    expect(await again.repo.read((await again.repo.tree(done.commit)).get("a.yaml")!)).toBe("kept\n");
  });

  test("copyHistory moves a disk history into the database and back, same ids, valid for git", async () => {
    const dir = tempDir();
    const disk = await ConfigRepo.open(join(dir, "from.git"));
    let parent: string | null = null;
    for (let i = 1; i <= 3; i++) {
      const files: Record<string, string | null> = { [`sources/s${i}.yaml`]: `id: s${i}\n`, "shared/same.yaml": "unchanged\n" };
      if (i === 3) files["sources/s1.yaml"] = null;
      parent = (await disk.commit(parent, changes(files), `commit ${i}`, author)).commit;
    }

    const { store, repo: db } = await replica(await database());
    expect(await ConfigRepo.copyHistory(disk, db)).toBe(parent);
    expect(await db.head()).toBe(parent);
    expect(await db.log(null, 10)).toEqual(await disk.log(null, 10));
    const ids = (await disk.objectIds(parent!)).sort();
    expect((await db.objectIds(parent!)).sort()).toEqual(ids);
    expect((await store.list(OBJECTS)).map((doc) => doc.id)).toEqual(ids);
    // Copying again is a no-op; into a repository with another history it is refused.
    expect(await ConfigRepo.copyHistory(disk, db)).toBe(parent);
    const other = await ConfigRepo.open(join(dir, "other.git"));
    await other.commit(null, changes({ "x.yaml": "x\n" }), "other", author);
    await expect(ConfigRepo.copyHistory(other, db)).rejects.toMatchObject({ status: 409, code: "history_exists" });

    // The stored objects are exactly git's: a copy back to disk passes git fsck.
    const back = await ConfigRepo.open(join(dir, "back.git"));
    await ConfigRepo.copyHistory(db, back);
    expect(await git(join(dir, "back.git"), "fsck", "--strict", "--no-dangling")).toBe("");
    expect((await git(join(dir, "back.git"), "log", "--format=%H", "main")).trim().split("\n")).toEqual((await disk.log(null, 10)).map((c) => c.commit));
  });
});
