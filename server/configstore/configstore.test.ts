import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "../store/sqlite.ts";
import { ConfigStore } from "./configstore.ts";
import { blobId } from "./layout.ts";
import { ConfigRepo } from "./repo.ts";

const who = { actor: "sa:tester", remoteAddr: "127.0.0.1" };
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

async function open() {
  const dir = mkdtempSync(join(tmpdir(), "svc-cfg-"));
  const store = new SqliteStore(join(dir, "state.db"));
  const repo = await ConfigRepo.open(join(dir, "config.git"));
  const config = new ConfigStore(store, repo);
  cleanups.push(async () => {
    config.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, store, repo, config, gitdir: join(dir, "config.git") };
}

function git(gitdir: string, ...args: string[]): string {
  const result = Bun.spawnSync(["git", "--git-dir", gitdir, ...args]);
  if (result.exitCode !== 0) throw new Error(result.stderr.toString());
  return result.stdout.toString();
}

describe("config store", () => {
  test("edits are pending until committed; plain git reads the commit", async () => {
    const { config, gitdir } = await open();
    expect(await config.changes()).toEqual({ items: [], diff: "" });
    await config.edit([{ path: "sources/a.yaml", text: "id: a\nname: A\n", expect: "absent" }], []);
    await config.edit([{ path: "collectors/c1/activations.yaml", text: "collectorId: c1\n" }], []);
    const pending = await config.changes();
    expect(pending.items).toEqual([
      // Collector names come from the registry the caller passes; without one they are unknown.
      { path: "collectors/c1/activations.yaml", change: "added", record: { kind: "collector", id: "c1", name: null } },
      { path: "sources/a.yaml", change: "added", record: { kind: "source", id: "a", name: "A" } },
    ]);
    expect(pending.diff).toContain("+++ b/sources/a.yaml");
    expect(pending.diff).toContain("+name: A");
    expect(await config.head()).toBeNull();

    const result = await config.commit(who, "Add source A");
    expect(result).toMatchObject({ message: "Add source A", author: "sa:tester", parent: null });
    expect(result.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(result.files).toHaveLength(2);
    expect((await config.changes()).items).toEqual([]);

    expect(git(gitdir, "log", "--format=%H %an %s", "main").trim()).toBe(`${result.commit} sa:tester Add source A`);
    expect(git(gitdir, "show", "main:sources/a.yaml")).toBe("id: a\nname: A\n");
    expect(git(gitdir, "show", "main:collectors/c1/activations.yaml")).toBe("collectorId: c1\n");
    expect(git(gitdir, "fsck", "--strict").trim()).toBe("");
    expect(git(gitdir, "rev-parse", "main", "--").trim().split("\n")[0]).toBe(result.commit);
  });

  test("modify and delete show as such, with a unified diff; nothing pending is 409", async () => {
    const { config, gitdir } = await open();
    await config.edit(
      [
        { path: "sources/a.yaml", text: "name: A\n" },
        { path: "sources/b.yaml", text: "name: B\n" },
      ],
      [],
    );
    const first = await config.commit(who, "two sources");
    await config.edit(
      [
        { path: "sources/a.yaml", text: "name: A2\n" },
        { path: "sources/b.yaml", text: null },
      ],
      [],
    );
    const { items, diff } = await config.changes();
    expect(items.map(({ path, change }) => ({ path, change }))).toEqual([
      { path: "sources/a.yaml", change: "modified" },
      { path: "sources/b.yaml", change: "deleted" },
    ]);
    expect(diff).toContain("--- a/sources/a.yaml\n+++ b/sources/a.yaml");
    expect(diff).toContain("-name: A\n+name: A2");
    expect(diff).toContain("--- a/sources/b.yaml\n+++ /dev/null");
    const second = await config.commit(who, "edit");
    expect(second.parent).toBe(first.commit);
    expect(git(gitdir, "ls-tree", "-r", "--name-only", "main").trim()).toBe("sources/a.yaml");
    await expect(config.commit(who, "again")).rejects.toMatchObject({ status: 409, code: "nothing_to_commit" });
  });

  test("a commit's diff is against its parent, naming records as of that commit (a deleted one as of its parent)", async () => {
    const { config } = await open();
    await config.edit(
      [
        { path: "sources/a.yaml", text: "id: a\nname: A\n" },
        { path: "sources/b.yaml", text: "id: b\nname: B\n" },
      ],
      [],
    );
    const first = await config.commit(who, "two sources");
    await config.edit(
      [
        { path: "sources/a.yaml", text: "id: a\nname: A2\n" },
        { path: "sources/b.yaml", text: null },
      ],
      [],
    );
    const second = await config.commit(who, "edit");
    const names = async (commit: string) => (await config.commitDiff(commit, async (id) => `collector ${id}`)).items;
    expect(await names(first.commit)).toEqual([
      { path: "sources/a.yaml", change: "added", record: { kind: "source", id: "a", name: "A" } },
      { path: "sources/b.yaml", change: "added", record: { kind: "source", id: "b", name: "B" } },
    ]);
    const diff = await config.commitDiff(second.commit);
    expect(diff).toMatchObject({ commit: second.commit, parent: first.commit, message: "edit", author: "sa:tester" });
    expect(diff.items).toEqual([
      { path: "sources/a.yaml", change: "modified", record: { kind: "source", id: "a", name: "A2" } },
      { path: "sources/b.yaml", change: "deleted", record: { kind: "source", id: "b", name: "B" } },
    ]);
    expect(diff.diff).toContain("-name: A\n+name: A2");
    expect(diff.diff).toContain("--- a/sources/b.yaml\n+++ /dev/null");
    for (const unknown of ["0".repeat(40), "main", first.commit.slice(0, 7)]) {
      await expect(config.commitDiff(unknown)).rejects.toMatchObject({ status: 404, code: "not_found" });
    }
  });

  test("an edit back to the committed text is not a change", async () => {
    const { config } = await open();
    await config.edit([{ path: "x.yaml", text: "a: 1\n" }], []);
    await config.commit(who, "x");
    await config.edit([{ path: "x.yaml", text: "a: 2\n" }], []);
    await config.edit([{ path: "x.yaml", text: "a: 1\n" }], []);
    expect((await config.changes()).items).toEqual([]);
  });

  test("discard returns the working tree to the head commit", async () => {
    const { config } = await open();
    await config.edit([{ path: "sources/a.yaml", text: "id: a\nname: A\n" }], []);
    await config.commit(who, "a");
    await config.edit(
      [
        { path: "sources/a.yaml", text: "id: a\nname: changed\n" },
        { path: "sources/b.yaml", text: "id: b\nname: B\n" },
      ],
      [],
    );
    expect((await config.worktree()).sources.get("a")!.name).toBe("changed");
    const dropped = await config.discard(who);
    expect(dropped.map((c) => c.change)).toEqual(["modified", "added"]);
    expect((await config.changes()).items).toEqual([]);
    const tree = await config.worktree();
    expect(tree.sources.get("a")!.name).toBe("A");
    expect(tree.sources.has("b")).toBe(false);
  });

  test("history is newest first with a cursor", async () => {
    const { config } = await open();
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      await config.edit([{ path: "n.yaml", text: `n: ${i}\n` }], []);
      made.unshift((await config.commit(who, `commit ${i}`)).commit);
    }
    const page1 = await config.commits(2);
    expect(page1.items.map((c) => c.commit)).toEqual(made.slice(0, 2));
    const page2 = await config.commits(2, page1.nextCursor!);
    expect(page2.items.map((c) => c.commit)).toEqual(made.slice(2, 4));
    const page3 = await config.commits(2, page2.nextCursor!);
    expect(page3).toEqual({ items: [expect.objectContaining({ commit: made[4], message: "commit 0" })], nextCursor: null });
  });

  test("snapshots parse records of a commit, and a reopened repository has the same head", async () => {
    const { config, dir, store } = await open();
    await config.edit([{ path: "sources/s1.yaml", text: "id: s1\nname: one\ntype: otlp\nconfig: {}\n" }], []);
    const { commit } = await config.commit(who, "s1");
    expect((await config.snapshotAt(commit)).sources.get("s1")).toEqual({ id: "s1", name: "one", type: "otlp", config: {} });
    const reopened = new ConfigStore(store, await ConfigRepo.open(join(dir, "config.git")));
    expect(await reopened.head()).toBe(commit);
    reopened.close();
  });

  test("the working-tree snapshot follows every edit, and one already handed out never changes", async () => {
    const { config, store } = await open();
    await config.edit([{ path: "sources/a.yaml", text: "id: a\nname: A\n" }], []);
    const first = await config.worktree();
    expect([...first.sources.keys()]).toEqual(["a"]);
    await config.edit(
      [
        { path: "sources/b.yaml", text: "id: b\nname: B\n" },
        { path: "collectors/c1/activations.yaml", text: "collectorId: c1\n" },
      ],
      [],
    );
    await config.edit([{ path: "sources/a.yaml", text: null }], []);
    const [second, third] = await Promise.all([config.worktree(), config.worktree()]);
    expect(second).toBe(third);
    expect([...second.sources.keys()]).toEqual(["b"]);
    expect([...second.activations.keys()]).toEqual(["c1"]);
    expect([...first.sources.keys()]).toEqual(["a"]);
    // A reader that starts from the stored files sees the same records.
    const fresh = new ConfigStore(store, config.repo);
    expect(await fresh.worktree()).toEqual(second);
    fresh.close();
  });

  test("blob ids match git's", async () => {
    const { gitdir } = await open();
    const text = "hello ☃\n";
    const proc = Bun.spawnSync(["git", "--git-dir", gitdir, "hash-object", "--stdin"], { stdin: new TextEncoder().encode(text) });
    expect(proc.stdout.toString().trim()).toBe(blobId(text));
  });
});
