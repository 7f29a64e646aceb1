/**
 * A bad configuration stops the real process before it listens or touches the
 * state file: it exits non-zero with a message naming the key and where the
 * value came from. An external database that does not answer is no
 * configuration error: the server starts and reports storage down.
 */
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bootstrapToken, freePort, isListening, killAll, removeTempDirs, startServer, tempDir, type StartOptions } from "./spawn.ts";

afterEach(killAll);
afterAll(async () => {
  await killAll();
  removeTempDirs();
});

/** Runs the server expecting it to give up; returns its exit code, stderr, port and state path. */
async function runFailing(options: StartOptions = {}) {
  const dir = tempDir();
  const statePath = join(dir, "state.db");
  const port = options.port ?? freePort();
  const server = await startServer({ statePath, port, ...options, waitReady: false });
  const code = await Promise.race([server.exited, Bun.sleep(10_000).then(() => "still running" as const)]);
  return { code, stderr: server.stderr(), stdout: server.stdout(), port, statePath, dir };
}

async function expectNothingLeft(result: Awaited<ReturnType<typeof runFailing>>) {
  expect(await isListening(result.port)).toBe(false);
  expect(existsSync(result.statePath)).toBe(false);
  expect(result.stdout).not.toContain("is serving at");
}

describe("configuration errors stop the process", () => {
  test("SVC_STORAGE_BACKEND=bolt names storage.backend and the variable", async () => {
    const result = await runFailing({ env: { SVC_STORAGE_BACKEND: "bolt" } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("invalid configuration");
    expect(result.stderr).toContain("storage.backend");
    expect(result.stderr).toContain("environment variable SVC_STORAGE_BACKEND");
    expect(result.stderr).toContain('"bolt"');
    await expectNothingLeft(result);
  });

  test("the external store without a secrets key names secrets.keyFile and SVC_SECRETS_KEY, and creates no key", async () => {
    const result = await runFailing({ env: { SVC_STORAGE_BACKEND: "external", SVC_DATABASE_URI: "postgres://127.0.0.1:1/svc" } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("secrets.keyFile");
    expect(result.stderr).toContain("SVC_SECRETS_KEY");
    expect(existsSync(join(result.dir, "secrets.key"))).toBe(false);
    await expectNothingLeft(result);
  });

  test("--config pointing to a missing file names the option and the path", async () => {
    const dir = tempDir();
    const missing = join(dir, "nope", "config.yaml");
    const result = await runFailing({ args: ["--config", missing] });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--config");
    expect(result.stderr).toContain(missing);
    expect(result.stderr).toContain("cannot read the file");
    await expectNothingLeft(result);
  });

  test("an unknown key in the config file is named with its file line", async () => {
    const dir = tempDir();
    const file = join(dir, "config.yaml");
    writeFileSync(file, ["logging:", "  level: info", "colour: blue", "storage:", "  retention: 3", ""].join("\n"));
    const result = await runFailing({ args: ["--config", file] });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`colour: unknown key (${file} line 3)`);
    expect(result.stderr).toContain(`storage.retention: unknown key (${file} line 5)`);
    await expectNothingLeft(result);
  });

  test("SVC_LISTEN=nonsense names listen and the variable", async () => {
    const result = await runFailing({ env: { SVC_LISTEN: "nonsense" } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("listen: must be host:port");
    expect(result.stderr).toContain("environment variable SVC_LISTEN");
    expect(existsSync(result.statePath)).toBe(false);
    expect(result.stdout).not.toContain("is serving at");
  });

  test("a port in use fails naming listen, and a later start still shows the first credential", async () => {
    const blocker = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    let result;
    try {
      result = await runFailing({ port: blocker.port });
    } finally {
      blocker.stop(true);
    }
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`cannot listen on 127.0.0.1:${blocker.port} (listen)`);
    expect(result.stdout).not.toContain("svcsa_");
    // The failed first start must not have used up the one-time credential.
    const server = await startServer({ statePath: result.statePath });
    expect(server.bannerToken).toMatch(/^svcsa_/);
    expect(await server.stop("SIGTERM")).toBe(0);
  });
});

describe("an external database nothing answers does not stop the start", () => {
  test("a mongodb:// URI: listening, /readyz 503, health names MongoDB down, retrying, stops cleanly", async () => {
    const dir = tempDir();
    const uri = `mongodb://svc:s3cret@127.0.0.1:${freePort()}/svc?serverSelectionTimeoutMS=300`;
    const token = bootstrapToken();
    const server = await startServer({
      statePath: join(dir, "state.db"),
      env: { SVC_STORAGE_BACKEND: "external", SVC_DATABASE_URI: uri, SVC_SECRETS_KEY: randomBytes(32).toString("base64"), SVC_BOOTSTRAP_ADMINTOKEN: token },
      waitReady: false,
    });
    let healthz = 0;
    for (let i = 0; i < 200 && healthz !== 200; i++) {
      healthz = await fetch(`${server.base}/healthz`).then(
        (res) => res.status,
        () => 0,
      );
      if (healthz !== 200) await Bun.sleep(50);
    }
    expect(healthz).toBe(200);
    expect((await fetch(`${server.base}/readyz`)).status).toBe(503);
    // While storage is down the credential cannot be checked; health answers anyway.
    const health = await fetch(`${server.base}/api/v1/system/health`, { headers: { Authorization: `Bearer ${token}` } });
    expect(health.status).toBe(200);
    expect(((await health.json()) as { storage: unknown }).storage).toMatchObject({ backend: "mongodb", status: "down" });
    for (let i = 0; i < 200 && !server.stdout().includes("the external store is unreachable; retrying"); i++) await Bun.sleep(50);
    expect(server.stdout()).toContain("the external store is unreachable; retrying");
    expect(server.stdout() + server.stderr()).not.toContain("s3cret");
    expect(await server.stop("SIGTERM")).toBe(0);
    expect(server.stdout()).not.toContain("is serving at");
  }, 30_000);
});
