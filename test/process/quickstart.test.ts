/**
 * The README quick-start as a user runs it: `bun server/main.ts --quickstart`
 * in an empty directory keeps its state in ./.data, prints where it serves, the
 * UI URL and the first admin credential once, and never again on the same
 * directory. Without externalUrl it hands collectors the URL it serves.
 */
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { api, killAll, removeTempDirs, startServer, tempDir } from "./spawn.ts";

afterEach(killAll);
afterAll(async () => {
  await killAll();
  removeTempDirs();
});

interface Readiness {
  ready: boolean;
  problem: string | null;
}

interface Health {
  status: string;
  version: string;
  externalUrl: string | null;
  onboarding: { externalUrlSource: string; collectorSnippet: Readiness; agentPackages: Readiness };
  storage: { backend: string; status: string };
}

describe("--quickstart", () => {
  test("serves from a fresh directory, shows the credential once, keeps state in ./.data/state.db", async () => {
    const cwd = tempDir("svc-quickstart-");
    const first = await startServer({ cwd, args: ["--quickstart"] });
    const out = first.stdout();
    expect(out).toMatch(new RegExp(`^svc \\S+ is serving at http://127\\.0\\.0\\.1:${first.port}$`, "m"));
    expect(first.bannerUrl).toBe(first.base);
    expect(out).toContain(`Web UI: ${first.base}/ui/\n`);
    expect(out).toContain(`externalUrl is not set: collectors, install snippets and bootstrap files use ${first.base} (this host only).`);
    expect(first.bannerToken).toMatch(/^svcsa_[A-Za-z0-9]{32,}$/);
    const token = first.bannerToken!;
    // Shown in the credential line and the curl example, nowhere else.
    expect(out.split(token).length - 1).toBe(2);
    expect(out).toContain(`curl -H "Authorization: Bearer ${token}" ${first.base}/api/v1/system/health`);

    // The web UI's admin: its password is in a file beside the state that only the server's user reads, never on stdout; it works at POST /session.
    const passwordFile = join(cwd, ".data", "ui-admin-password");
    expect(out).toContain(`UI login: admin, password in ${passwordFile}\n`);
    expect(statSync(passwordFile).mode & 0o777).toBe(0o600);
    const password = readFileSync(passwordFile, "utf8").trim();
    expect(password).toMatch(/^[A-Za-z0-9]{20}$/);
    expect(out).not.toContain(password);
    expect(first.stderr()).not.toContain(password);
    const login = await api(first.base, null, "/session", { method: "POST", json: { username: "admin", password } });
    expect(login.status).toBe(200);

    const res = await api(first.base, token, "/system/health");
    expect(res.status).toBe(200);
    const health = (await res.json()) as Health;
    expect(health.status).toBe("ok");
    expect(health.storage).toEqual({ backend: "embedded", status: "up" });
    // No externalUrl configured: the quick-start uses the URL it serves, and says so.
    expect(health.externalUrl).toBe(first.base);
    expect(health.onboarding.externalUrlSource).toBe("listen");
    expect(health.onboarding.collectorSnippet).toEqual({ ready: true, problem: null });
    // A collector snippet works against it: the endpoint it names serves install.sh, and its token renders bootstrap files.
    const minted = await api(first.base, token, "/collectors/snippet", { method: "POST" });
    expect(minted.status).toBe(201);
    const { snippet } = (await minted.json()) as { snippet: string };
    const line = new RegExp(
      `^curl -fsSL ${first.base}/downloads/install\\.sh \\| sudo sh -s -- --endpoint ${first.base} --token (svcen_\\w+) --mode opamp$`,
    ).exec(snippet);
    expect(line).not.toBeNull();
    expect((await fetch(`${first.base}/downloads/install.sh`)).status).toBe(200);
    const supervisor = await fetch(`${first.base}/v1/bootstrap?file=/etc/opampsupervisor/config.yaml`, { headers: { Authorization: `Bearer ${line![1]}` } });
    expect(supervisor.status).toBe(200);
    // The upstream supervisor takes a plain ws:// server.endpoint (OpAMPServer.Validate allows http, https, ws and wss:
    // open-telemetry/opentelemetry-collector-contrib cmd/opampsupervisor/supervisor/config/config.go at 0077d295ec4f).
    expect(await supervisor.text()).toContain(`ws://127.0.0.1:${first.port}/v1/opamp`);
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

  test("a start without --quickstart and without externalUrl still refuses to guess the collectors' URL", async () => {
    const cwd = tempDir("svc-quickstart-");
    const server = await startServer({ cwd, env: { SVC_STORAGE_BOLTPATH: join(cwd, "state.db"), SVC_DOWNLOADS_DIR: cwd } });
    expect(server.stdout()).toContain(`Web UI: ${server.base}/ui/`);
    expect(server.stdout()).not.toContain("externalUrl is not set");
    const health = (await (await api(server.base, server.bannerToken, "/system/health")).json()) as Health;
    expect(health.externalUrl).toBeNull();
    expect(health.onboarding.externalUrlSource).toBe("unset");
    expect(health.onboarding.collectorSnippet.problem).toContain("set externalUrl");
    expect((await api(server.base, server.bannerToken, "/collectors/snippet", { method: "POST" })).status).toBe(409);
    expect(await server.stop("SIGTERM")).toBe(0);
  }, 30_000);

  test("EXTERNAL_URL alone sets externalUrl, without the trailing slash", async () => {
    const cwd = tempDir("svc-quickstart-");
    const server = await startServer({ cwd, args: ["--quickstart"], env: { EXTERNAL_URL: "https://svc.example.com/" } });
    expect(server.bannerToken).not.toBeNull();
    const res = await api(server.base, server.bannerToken, "/system/health");
    expect(res.status).toBe(200);
    const health = (await res.json()) as Health;
    expect(health.externalUrl).toBe("https://svc.example.com");
    expect(health.onboarding.externalUrlSource).toBe("config");
    expect(server.stdout()).not.toContain("externalUrl is not set");
    expect(await server.stop("SIGTERM")).toBe(0);
  }, 30_000);
});
