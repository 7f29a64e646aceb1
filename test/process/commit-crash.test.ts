/**
 * Commits are atomic: kill -9 at random moments while edits and commits run,
 * and after every restart the repository is sound (git fsck), the branch names
 * a real commit, every acknowledged commit is in the history, and the server
 * commits again.
 */
import { afterAll, afterEach, expect, test } from "bun:test";
import { join } from "node:path";
import { api, bootstrapToken, killAll, removeTempDirs, startServer, tempDir } from "./spawn.ts";

afterEach(killAll);
afterAll(async () => {
  await killAll();
  removeTempDirs();
});

function git(gitdir: string, ...args: string[]): { code: number; out: string } {
  const result = Bun.spawnSync(["git", "--git-dir", gitdir, ...args]);
  return { code: result.exitCode, out: result.stdout.toString() + result.stderr.toString() };
}

test("kill -9 during commits never breaks the history or loses an acknowledged commit", async () => {
  const dir = tempDir();
  const statePath = join(dir, "state.db");
  const gitdir = join(dir, "config.git");
  const token = bootstrapToken();
  const env = { SVC_BOOTSTRAP_ADMINTOKEN: token, SVC_LOGGING_LEVEL: "warn" };
  const acknowledged: string[] = [];
  const rounds = 8;

  for (let round = 0; round < rounds; round++) {
    const server = await startServer({ statePath, env });
    let stop = false;
    const worker = (async () => {
      for (let i = 0; !stop; i++) {
        try {
          const edit = await api(server.base, token, "/sources", {
            method: "POST",
            json: { name: `r${round}-s${i}`, type: "otlp", config: {} },
          });
          if (edit.status !== 201) continue;
          const res = await api(server.base, token, "/commit", { method: "POST", json: { message: `round ${round} edit ${i}` } });
          if (res.status === 201) acknowledged.push(((await res.json()) as { commit: string }).commit);
        } catch {
          return; // the server died under us
        }
      }
    })();
    await Bun.sleep(150 + Math.random() * 400);
    server.proc.kill("SIGKILL");
    await server.exited;
    stop = true;
    await worker;

    expect(git(gitdir, "fsck", "--strict", "--no-dangling")).toEqual({ code: 0, out: "" });
    const head = git(gitdir, "rev-parse", "--verify", "main^{commit}");
    if (acknowledged.length > 0) expect(head.code).toBe(0);
    const log = git(gitdir, "log", "--format=%H", "main").out.split("\n").filter(Boolean);
    for (const commit of acknowledged) expect(log).toContain(commit);
  }

  const last = await startServer({ statePath, env });
  const more = await api(last.base, token, "/sources", { method: "POST", json: { name: "after", type: "otlp", config: {} } });
  expect(more.status).toBe(201);
  const commit = await api(last.base, token, "/commit", { method: "POST", json: { message: "after the storm" } });
  expect(commit.status).toBe(201);
  const history = (await (await api(last.base, token, "/commits?limit=1000")).json()) as { items: { commit: string }[] };
  for (const acked of acknowledged) expect(history.items.map((c) => c.commit)).toContain(acked);
  expect(acknowledged.length).toBeGreaterThan(rounds);
}, 120_000);
