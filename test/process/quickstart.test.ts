/**
 * The README quick-start as a user runs it: `bun server/main.ts --quickstart`
 * in an empty directory keeps its state in ./.data, prints where it serves and
 * the first admin credential once, and never again on the same directory.
 */
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { api, killAll, removeTempDirs, startServer, tempDir } from "./spawn.ts";

afterEach(killAll);
afterAll(async () => {
  await killAll();
  removeTempDirs();
});

interface Health {
  status: string;
  version: string;
  externalUrl: string | null;
  storage: { backend: string; status: string };
}

describe("--quickstart", () => {
  test("serves from a fresh directory, shows the credential once, keeps state in ./.data/state.db", async () => {
    const cwd = tempDir("svc-quickstart-");
    const first = await startServer({ cwd, args: ["--quickstart"] });
    const out = first.stdout();
    expect(out).toMatch(new RegExp(`^svc \\S+ is serving at http://127\\.0\\.0\\.1:${first.port}$`, "m"));
    expect(first.bannerUrl).toBe(first.base);
    expect(first.bannerToken).toMatch(/^svcsa_[A-Za-z0-9]{32,}$/);
    const token = first.bannerToken!;
    // Shown in the credential line and the curl example, nowhere else.
    expect(out.split(token).length - 1).toBe(2);
    expect(out).toContain(`curl -H "Authorization: Bearer ${token}" ${first.base}/api/v1/system/health`);

    // The web UI's admin, also shown once; its password works at POST /session.
    const ui = /^UI login: admin \/ ([A-Za-z0-9]{20})$/m.exec(out);
    expect(ui).not.toBeNull();
    const login = await api(first.base, null, "/session", { method: "POST", json: { username: "admin", password: ui![1] } });
    expect(login.status).toBe(200);

    const res = await api(first.base, token, "/system/health");
    expect(res.status).toBe(200);
    const health = (await res.json()) as Health;
    expect(health.status).toBe("ok");
    expect(health.storage).toEqual({ backend: "embedded", status: "up" });
    expect(health.externalUrl).toBeNull();
    expect(existsSync(join(cwd, ".data", "state.db"))).toBe(true);
    expect(await first.stop("SIGTERM")).toBe(0);

    const second = await startServer({ cwd, args: ["--quickstart"] });
    expect(second.bannerToken).toBeNull();
    expect(second.stdout()).not.toContain("svcsa_");
    expect(second.stdout()).not.toContain("UI login");
    expect(second.stdout()).toMatch(/^svc \S+ is serving at /m);
    // The first credential still works: same state file.
    const again = await api(second.base, token, "/system/health");
    expect(again.status).toBe(200);
    expect(await second.stop("SIGTERM")).toBe(0);
  }, 30_000);

  test("EXTERNAL_URL alone sets externalUrl, without the trailing slash", async () => {
    const cwd = tempDir("svc-quickstart-");
    const server = await startServer({ cwd, args: ["--quickstart"], env: { EXTERNAL_URL: "https://svc.example.com/" } });
    expect(server.bannerToken).not.toBeNull();
    const res = await api(server.base, server.bannerToken, "/system/health");
    expect(res.status).toBe(200);
    expect(((await res.json()) as Health).externalUrl).toBe("https://svc.example.com");
    expect(await server.stop("SIGTERM")).toBe(0);
  }, 30_000);
});
