/**
 * The shipped artifact: `bun run build` compiles dist/svc-server (scripts/build-for-tests.sh
 * runs it before the tests), and that binary (not the source) starts, serves the probes, the API (a dry-run, whose
 * worker is compiled in too) and the embedded web UI, and stops cleanly on SIGTERM.
 */
import { afterAll, afterEach, expect, test } from "bun:test";
import { existsSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { built } from "../built.ts";
import { api, killAll, removeTempDirs, REPO, startServer, tempDir } from "./spawn.ts";

afterEach(killAll);
afterAll(async () => {
  await killAll();
  removeTempDirs();
});

test("dist/svc-server from bun run build serves /healthz and the API", async () => {
  // Built before the tests (scripts/build-for-tests.sh); built() fails if it is older than its sources.
  const binary = built("dist/svc-server");

  const dir = tempDir();
  const statePath = join(dir, "state.db");
  // Run from the temp dir, so nothing can be picked up from the repository.
  const server = await startServer({ command: [binary], cwd: dir, statePath });
  // It is the compiled binary that runs, not bun with the source.
  if (existsSync(`/proc/${server.proc.pid}/exe`)) expect(readlinkSync(`/proc/${server.proc.pid}/exe`)).toBe(binary);
  expect(server.bannerToken).toMatch(/^svcsa_[A-Za-z0-9]{32,}$/);

  const healthz = await fetch(`${server.base}/healthz`);
  expect(healthz.status).toBe(200);
  expect(await healthz.text()).toBe("ok\n");

  const res = await api(server.base, server.bannerToken, "/system/health");
  expect(res.status).toBe(200);
  const health = (await res.json()) as { status: string; version: string; storage: { backend: string; status: string } };
  expect(health.status).toBe("ok");
  expect(health.storage).toEqual({ backend: "embedded", status: "up" });
  const pkg = (await Bun.file(join(REPO, "package.json")).json()) as { version: string };
  expect(health.version).toBe(pkg.version);
  expect(existsSync(statePath)).toBe(true);

  // A dry-run runs in a worker, a second entry point compiled into the binary.
  const pipeline = (await (await api(server.base, server.bannerToken, "/pipelines", { method: "POST", json: { name: "bin", signal: "logs" } })).json()) as {
    id: string;
  };
  const logs = (bodies: string[]) => ({ resourceLogs: [{ scopeLogs: [{ logRecords: bodies.map((b) => ({ body: { stringValue: b } })) }] }] });
  const dry = await api(server.base, server.bannerToken, `/pipelines/${pipeline.id}/dry-run`, {
    method: "POST",
    json: {
      input: logs(["GET /healthz", "order 42"]),
      processors: [{ id: "f", type: "filter", config: { logs: { log_record: ['IsMatch(body, "healthz")'] } } }],
    },
  });
  expect(dry.status).toBe(200);
  expect(((await dry.json()) as { output: unknown; steps: unknown }).output).toEqual(logs(["order 42"]));

  // The web UI is inside the binary: index.html and its hashed bundle, from a cwd with no sources.
  const index = await fetch(`${server.base}/ui/login`);
  expect(index.status).toBe(200);
  const script = /<script type="module" src="(\/ui\/assets\/[^"]+\.js)"/.exec(await index.text())?.[1];
  expect(script).toBeDefined();
  const bundle = await fetch(`${server.base}${script}`);
  expect(bundle.status).toBe(200);
  expect(bundle.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
  expect(await bundle.text()).toContain("Sign in to svc");

  expect(await server.stop("SIGTERM")).toBe(0);
}, 120_000);
