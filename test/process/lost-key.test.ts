/**
 * Issue 33 item 6: a deleted secrets.key is not silently replaced while the
 * state file holds values sealed with it. The real process, restarted on the
 * same state without its key file, exits 1 naming the file to restore and
 * leaves no new key behind; with the file restored it starts and the secret
 * still opens. A state with nothing sealed still gets a key made up.
 */
import { afterAll, afterEach, expect, test } from "bun:test";
import { copyFileSync, existsSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { bootstrapToken, killAll, removeTempDirs, startServer, tempDir } from "./spawn.ts";

afterEach(killAll);
afterAll(async () => {
  await killAll();
  removeTempDirs();
});

test("a state with sealed values and no secrets.key does not start; restoring the file does", async () => {
  const dir = tempDir();
  const statePath = join(dir, "state.db");
  const keyFile = join(dir, "secrets.key");
  const token = bootstrapToken();
  const env = { SVC_BOOTSTRAP_ADMINTOKEN: token };
  const first = await startServer({ statePath, env });
  const res = await fetch(`${first.base}/api/v1/destinations`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify({
      name: "sealed",
      type: "otlphttp",
      config: { endpoint: "https://otlp.example.com", headers: { Authorization: "Bearer lost-key-3f9a" } },
    }),
  });
  expect(res.status).toBe(201);
  const id = ((await res.json()) as { id: string }).id;
  expect(await first.stop("SIGTERM")).toBe(0);

  const backup = join(tempDir(), "secrets.key");
  copyFileSync(keyFile, backup);
  unlinkSync(keyFile);
  const refused = await startServer({ statePath, env, waitReady: false });
  const code = await Promise.race([refused.exited, Bun.sleep(20_000).then(() => "still running" as const)]);
  expect(code).toBe(1);
  expect(refused.stderr()).toContain(`the secrets key file ${keyFile} is missing`);
  expect(refused.stderr()).toContain(`Restore ${keyFile} from the backup`);
  expect(refused.stdout()).not.toContain("is serving at");
  // No new key was kept: the next start says the same, it does not start on a wrong key.
  expect(existsSync(keyFile)).toBe(false);

  copyFileSync(backup, keyFile);
  const restored = await startServer({ statePath, env });
  const read = await fetch(`${restored.base}/api/v1/destinations/${id}`, { headers: { Authorization: `Bearer ${token}` } });
  expect(read.status).toBe(200);
  expect(JSON.stringify(await read.json())).toContain('"set":true');
}, 90_000);

test("a state with nothing sealed and no secrets.key starts with a new key", async () => {
  const dir = tempDir();
  const statePath = join(dir, "state.db");
  const first = await startServer({ statePath });
  expect(await first.stop("SIGTERM")).toBe(0);
  unlinkSync(join(dir, "secrets.key"));
  const again = await startServer({ statePath });
  expect((await fetch(`${again.base}/healthz`)).status).toBe(200);
  expect(existsSync(join(dir, "secrets.key"))).toBe(true);
}, 60_000);
