/**
 * Disk full on the embedded store: the state file and the git repository
 * beside it live on a small tmpfs that a filler file fills to the last byte.
 * While full:
 * - writes through the real API (config edit + commit, collector create,
 *   token rotation) are refused with 507 `storage_full` + Retry-After in the
 *   shared error shape, never a 500; a write the filesystem still found room
 *   for (SQLite can reuse space it holds) is a real, kept write;
 * - a commit that fails mid-way leaves the repository as it was: same head,
 *   `git fsck --strict` clean, no temp object or lock file left;
 * - a refused rotation leaves the old token working (nothing half-rotated);
 * - reads (lists, history, a collector's remote config) are served and
 *   /system/health says `degraded` with the reason while /readyz stays ready.
 * Then the filler is deleted and the same writes succeed without a restart;
 * after a kill -9 and restart every acknowledged write is still there.
 * Needs root for `mount -t tmpfs` (CI runs as root); without it the test fails
 * and says so rather than skipping.
 */
import { afterAll, expect, test } from "bun:test";
import { closeSync, mkdtempSync, openSync, readdirSync, rmdirSync, unlinkSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deploymentKit } from "../deployment.ts";
import { api, bootstrapToken, killAll, startServer, type ServerProcess } from "../process/spawn.ts";

const mountDir = mkdtempSync(join(tmpdir(), "svc-diskfull-"));
let mounted = false;

async function run(...cmd: string[]): Promise<{ code: number; out: string }> {
  const proc = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, out: out + err };
}

afterAll(async () => {
  await killAll(); // the server holds files on the tmpfs open
  if (mounted) {
    const { code, out } = await run("umount", mountDir);
    if (code !== 0) throw new Error(`umount ${mountDir} failed: ${out}`);
  }
  rmdirSync(mountDir);
});

/** Writes to `path` until the filesystem refuses: big chunks first, then small ones for the last bytes. */
function fill(path: string): void {
  const fd = openSync(path, "w");
  try {
    for (const size of [1 << 20, 64 << 10, 4096, 512, 1]) {
      const chunk = Buffer.alloc(size, 1);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
      }
    }
  } finally {
    closeSync(fd);
  }
}

test("disk full on the embedded store: writes refused with 507, reads served, nothing lost, recovery without a restart", async () => {
  if (process.getuid?.() !== 0) throw new Error("this test mounts a tmpfs and needs root (CI runs as root); run it as root");
  const mount = await run("mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", mountDir);
  if (mount.code !== 0) throw new Error(`mount -t tmpfs on ${mountDir} is not permitted here (the test needs it): ${mount.out}`);
  mounted = true;

  const statePath = join(mountDir, "state.db");
  const gitdir = join(mountDir, "config.git");
  const filler = join(mountDir, "filler");
  const admin = bootstrapToken();
  const start = () => startServer({ statePath, env: { SVC_BOOTSTRAP_ADMINTOKEN: admin, SVC_LOGGING_LEVEL: "error" } });
  let server: ServerProcess = await start();
  const req = (path: string, method = "GET", json?: unknown) => api(server.base, admin, path, { method, json });
  const call = async <T = Record<string, unknown>>(path: string, method = "GET", json?: unknown): Promise<T> => {
    const res = await req(path, method, json);
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status}: ${text}`);
    return (text === "" ? undefined : JSON.parse(text)) as T;
  };
  const getConfig = (token: string, id: string) =>
    fetch(`${server.base}/collector.v1.CollectorService/GetConfig`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
      body: JSON.stringify({ id }),
    });
  /** A refusal for a full disk: 507 storage_full, Retry-After, the shared error shape. */
  const expectFull = async (res: Response) => {
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect({ status: res.status, code: body.error.code, retryAfter: Number(res.headers.get("retry-after")) > 0 }).toEqual({
      status: 507,
      code: "storage_full",
      retryAfter: true,
    });
    expect(body.error.message).toContain("full");
  };

  // A committed, published collector with a token, and one edit left pending for the commit under a full disk.
  const routeThrough = await deploymentKit(call);
  const collector = (await call<{ id: string }>("/collectors", "POST", { name: "alloy-a", managementMode: "rcfg-remotecfg" })).id;
  await routeThrough(collector);
  const acknowledgedCommits = [(await call<{ commit: string }>("/commit", "POST", { message: "base" })).commit];
  await call("/publish", "POST");
  let token = (await call<{ token: string }>(`/collectors/${collector}/otlp-token`, "POST")).token;
  const sourceId = (await call<{ items: { sourceId: string }[] }>(`/collectors/${collector}/sources`)).items[0]!.sourceId;
  await call(`/collectors/${collector}/sources`, "POST", { sourceId, configOverrides: { include: ["/var/log/pending/*.log"] } });
  const acknowledgedCollectors = [collector];
  const head = (await run("git", "--git-dir", gitdir, "rev-parse", "main")).out.trim();

  fill(filler);

  // The commit writes new git objects: refused, and the repository is as it was.
  await expectFull(await req("/commit", "POST", { message: "under a full disk" }));
  expect((await run("git", "--git-dir", gitdir, "rev-parse", "main")).out.trim()).toBe(head);
  expect(await run("git", "--git-dir", gitdir, "fsck", "--strict", "--no-dangling")).toEqual({ code: 0, out: "" });
  const leftovers = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && (e.name.startsWith("tmp_obj_") || e.name.endsWith(".lock")))
      .map((e) => e.name);
  expect(leftovers(gitdir)).toEqual([]);
  // The pending edit is still pending, to be committed once there is room.
  expect((await call<{ items: unknown[] }>("/changes")).items.length).toBeGreaterThan(0);

  // Store writes: refused with 507 once SQLite needs a new page; any write answered 2xx before that is kept.
  const refusals = [0, 0, 0]; // per kind: collector create, token rotation, config edit
  for (let i = 0; i < 60 && refusals.includes(0); i++) {
    const kind = i % 3;
    const res =
      kind === 0
        ? await req("/collectors", "POST", { name: `full-${i}`, managementMode: "rcfg-remotecfg" })
        : kind === 1
          ? await req(`/collectors/${collector}/otlp-token`, "POST")
          : await req(`/collectors/${collector}/sources`, "POST", { sourceId, configOverrides: { include: [`/var/log/full-${i}/*.log`] } });
    if (res.status === 507) {
      await expectFull(res);
      refusals[kind]!++;
      continue;
    }
    expect(res.status).toBeLessThan(300);
    const body = (await res.json()) as { id?: string; token?: string };
    if (kind === 0) acknowledgedCollectors.push(body.id!);
    if (kind === 1) token = body.token!;
  }
  expect(refusals.every((n) => n > 0)).toBe(true);

  // Reads are served; the token last answered works (a refused rotation left it alone); health says why.
  expect((await call<{ items: { id: string }[] }>("/collectors?limit=1000")).items.map((c) => c.id).sort()).toEqual([...acknowledgedCollectors].sort());
  expect((await call<{ items: { commit: string }[] }>("/commits")).items.map((c) => c.commit)).toEqual(acknowledgedCommits);
  // A remote config poll is a read: the collector gets its config even though its presence cannot be recorded.
  const polled = await getConfig(token, collector);
  expect(polled.status).toBe(200);
  expect(((await polled.json()) as { content: string }).content).toContain("/var/log/app/*.log");
  const health = await call<{ status: string; storage: { status: string; error?: string } }>("/system/health");
  expect({ status: health.status, storage: health.storage.status }).toEqual({ status: "degraded", storage: "up" });
  expect(health.storage.error).toContain("storage_full");
  expect((await fetch(`${server.base}/readyz`)).status).toBe(200);

  // Space freed: the same writes succeed, without a restart.
  unlinkSync(filler);
  const created = await call<{ id: string }>("/collectors", "POST", { name: "after", managementMode: "rcfg-remotecfg" });
  acknowledgedCollectors.push(created.id);
  token = (await call<{ token: string }>(`/collectors/${collector}/otlp-token`, "POST")).token;
  await call(`/collectors/${collector}/sources`, "POST", { sourceId, configOverrides: { include: ["/var/log/after/*.log"] } });
  acknowledgedCommits.unshift((await call<{ commit: string }>("/commit", "POST", { message: "after the disk was freed" })).commit);
  await call("/publish", "POST");
  expect((await call<{ status: string }>("/system/health")).status).toBe("ok");
  expect(await run("git", "--git-dir", gitdir, "fsck", "--strict", "--no-dangling")).toEqual({ code: 0, out: "" });

  // Nothing acknowledged is lost, across a kill -9 and a restart.
  await server.stop("SIGKILL");
  server = await start();
  expect((await call<{ items: { id: string }[] }>("/collectors?limit=1000")).items.map((c) => c.id).sort()).toEqual([...acknowledgedCollectors].sort());
  expect((await call<{ items: { commit: string }[] }>("/commits")).items.map((c) => c.commit)).toEqual(acknowledgedCommits);
  const after = await getConfig(token, collector);
  expect(after.status).toBe(200);
  expect(((await after.json()) as { content: string }).content).toContain("/var/log/after/*.log");
  await server.stop("SIGTERM");
}, 60_000);
