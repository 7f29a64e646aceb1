/**
 * The on-disk history moves its branch by compare-and-swap: writers that do
 * not share a process (two repositories opened on one gitdir stand in for two
 * servers that slipped past the store lock) cannot both move it from the same
 * parent, so no acknowledged commit is ever dropped from history.
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ConflictError } from "../errors.ts";
import { REF } from "./repo-backend.ts";
import { ConfigRepo } from "./repo.ts";

const dir = mkdtempSync(join(tmpdir(), "svc-repo-disk-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const author = { name: "sa:tester", email: "sa-tester@svc.invalid" };

test("12 writers committing on one on-disk history: every acknowledged commit stays in it", async () => {
  const gitdir = join(dir, "many.git");
  const writers = await Promise.all(Array.from({ length: 12 }, () => ConfigRepo.open(gitdir)));
  const acknowledged: string[] = [];
  for (let round = 0; round < 4; round++) {
    const parent = await writers[0]!.head();
    const outcomes = await Promise.allSettled(
      writers.map((repo, i) => repo.commit(parent, new Map([[`round-${round}/writer-${i}.yaml`, `round: ${round}\n`]]), `round ${round} writer ${i}`, author)),
    );
    const won = outcomes.flatMap((o) => (o.status === "fulfilled" ? [o.value.commit] : []));
    for (const o of outcomes) if (o.status === "rejected") expect((o.reason as ConflictError).code).toBe("head_moved");
    expect(won).toHaveLength(1);
    acknowledged.push(...won);
  }
  const history = (await writers[0]!.log(null, 100)).map((c) => c.commit);
  expect(history.slice().reverse()).toEqual(acknowledged);
  expect(existsSync(join(gitdir, `${REF}.lock`))).toBe(false);
});

test("a ref lock left by a crash is cleared when the repository is opened", async () => {
  const gitdir = join(dir, "crashed.git");
  const repo = await ConfigRepo.open(gitdir);
  const first = await repo.commit(null, new Map([["a.yaml", "a: 1\n"]]), "first", author);
  writeFileSync(join(gitdir, `${REF}.lock`), "0".repeat(40) + "\n");
  const reopened = await ConfigRepo.open(gitdir);
  const second = await reopened.commit(first.commit, new Map([["b.yaml", "b: 1\n"]]), "second", author);
  expect(await reopened.head()).toBe(second.commit);
});
