/**
 * The compiled `svc-agent` binary against the real server process: it
 * enrolls with an agent token, reports its host and a service matched by a
 * custom fingerprint, answers browse calls relayed through the REST API
 * within its rules, reconnects by itself after the server was killed for
 * 30 s, and, with a legacy `grpcs://` URL, reaches `/v1/agent` over verified
 * TLS. CLI misuse exits non-zero and names the problem.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { linkSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUN, bootstrapToken, isListening, processMemory, removeTempDirs, startServer, tempDir, type ServerProcess } from "../process/spawn.ts";
import { built } from "../built.ts";
import { until } from "../opamp/helpers.ts";

const ADMIN = bootstrapToken();
const TLS_DIR = join(import.meta.dir, "tls");
let dir: string;
let binary: string;
let server: ServerProcess;
let statePath: string;
const agents: Subprocess[] = [];

async function api<T = Record<string, unknown>>(path: string, init: RequestInit = {}): Promise<{ status: number; body: T }> {
  const res = await fetch(`${server.base}/api/v1${path}`, { ...init, headers: { Authorization: `Bearer ${ADMIN}`, "Content-Type": "application/json" } });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

async function agentToken(maxUses: number | null = 10): Promise<string> {
  const { status, body } = await api<{ token: string }>("/enrollment-tokens", { method: "POST", body: JSON.stringify({ kind: "agent", maxUses }) });
  expect(status).toBe(201);
  return body.token;
}

function writeConfig(name: string, text: string): string {
  const path = join(dir, `${name}.yaml`);
  writeFileSync(path, text);
  return path;
}

function runAgent(config: string): Subprocess {
  const proc = Bun.spawn([binary, "--config", config], {
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, HTTP_PROXY: "", HTTPS_PROXY: "", http_proxy: "", https_proxy: "" },
  });
  agents.push(proc);
  return proc;
}

function run(args: string[]): { code: number; out: string; err: string } {
  const result = Bun.spawnSync([binary, ...args], { stdout: "pipe", stderr: "pipe" });
  return { code: result.exitCode, out: result.stdout.toString(), err: result.stderr.toString() };
}

interface AgentView {
  status: string;
  connected: boolean;
  discovery: { services: { fingerprint: string; pids: number[]; ports: number[]; logFiles: string[] }[] } | null;
}

beforeAll(async () => {
  dir = tempDir("svc-agent-e2e-");
  binary = built("dist/svc-agent"); // compiled before the tests by scripts/build-for-tests.sh
  statePath = join(dir, "state.db");
  server = await startServer({ statePath, env: { SVC_BOOTSTRAP_ADMINTOKEN: ADMIN, SVC_LOGGING_LEVEL: "warn" } });
}, 60_000);

afterAll(async () => {
  for (const proc of agents) proc.kill("SIGKILL");
  await server?.stop();
  removeTempDirs();
});

describe("CLI", () => {
  test("no --config, a missing file, a bad key: non-zero exits that name the problem; validate and --version", () => {
    const none = run([]);
    expect(none.code).toBe(2);
    expect(none.err).toContain("--config <path> is required");
    const missing = run(["--config", join(dir, "nope.yaml")]);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain("--config:");
    expect(missing.err).toContain("does not exist");
    const bad = writeConfig(
      "bad",
      "server:\n  url: https://svc.example.com\n  token: svcen_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\nbrowse:\n  maxDirEntry: 5\n",
    );
    const invalid = run(["--config", bad]);
    expect(invalid.code).toBe(1);
    expect(invalid.err).toContain("browse.maxDirEntry");
    expect(run(["validate", "--config", bad]).code).toBe(1);
    const good = writeConfig("good", "server:\n  url: https://svc.example.com\n  token: svcen_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n");
    expect(run(["validate", "--config", good])).toMatchObject({ code: 0 });
    expect(run(["--version"]).out.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe("the compiled agent against the server", () => {
  let tree: string;
  let service: Subprocess;
  let serviceName: string;

  beforeAll(async () => {
    tree = join(dir, "tree");
    mkdirSync(join(tree, "app"), { recursive: true });
    mkdirSync(join(tree, "home/.ssh"), { recursive: true });
    mkdirSync(join(tree, "etc"), { recursive: true });
    mkdirSync(join(tree, "many"), { recursive: true });
    writeFileSync(join(tree, "app/app.log"), Array.from({ length: 1000 }, (_, i) => `line ${i + 1}`).join("\n") + "\n");
    writeFileSync(join(tree, "app/secret.key"), "-----BEGIN PRIVATE KEY-----\n");
    writeFileSync(join(tree, "app/id_rsa"), "key\n");
    writeFileSync(join(tree, "home/.ssh/config"), "Host *\n");
    writeFileSync(join(tree, "etc/shadow"), "root:*:1:0:99999:7:::\n");
    symlinkSync(join(tree, "etc/shadow"), join(tree, "app/looks-fine.log"));
    symlinkSync("/etc/hostname", join(tree, "app/outside.log"));
    for (let i = 0; i < 5000; i++) writeFileSync(join(tree, "many", `f${String(i).padStart(4, "0")}.log`), "");

    // A service the custom fingerprint recognises: a bun named after it, listening on a port.
    serviceName = `svcfp${Math.random().toString(36).slice(2, 8)}`;
    const exe = join(dir, serviceName);
    linkSync(BUN, exe);
    service = Bun.spawn(
      [exe, "-e", "const s = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } }); console.log(s.port); setInterval(() => {}, 1000);"],
      { stdout: "pipe" },
    );
    agents.push(service);
  });

  const baseConfig = (token: string, id: string, browse: string) => `
server:
  url: ${server.base}
  token: ${token}
agent:
  id: ${id}
  stateDir: ${dir}/state-${id}
browse:
${browse}
customFingerprints:
  - name: e2e-app
    title: E2E test service
    match:
      processNames: [${serviceName}]
    logPaths: [${tree}/app/*.log]
    pipeline:
      source: { type: filelog, config: { include: ["${tree}/app/*.log"] } }
`;

  test("enrolls, shows its host in GET /agents with the fingerprinted service; browse calls obey the rules", async () => {
    const token = await agentToken(3);
    runAgent(writeConfig("main", baseConfig(token, "e2e-main", `  allowedRoots: [${tree}]`)));
    await until(async () => {
      const { body } = await api<{ items: { id: string; status: string }[] }>("/agents");
      return body.items.some((a) => a.id === "e2e-main" && a.status === "online");
    }, 15_000);
    let found: AgentView["discovery"] = null;
    await until(async () => {
      found = (await api<AgentView>("/agents/e2e-main")).body.discovery;
      return found?.services.some((s) => s.fingerprint === "e2e-app") ?? false;
    }, 15_000);
    const match = found!.services.find((s) => s.fingerprint === "e2e-app")!;
    expect(match.pids).toContain(service.pid);
    // Enrolled: the agent keeps the credential the server issued, owner-only, in agent.stateDir.
    const credentialFile = join(dir, "state-e2e-main", "credential.json");
    expect(JSON.parse(readFileSync(credentialFile, "utf8"))).toMatchObject({ agentId: "e2e-main", credential: expect.stringMatching(/^svcag_/) });
    expect(statSync(credentialFile).mode & 0o777).toBe(0o600);
    expect(match.logFiles).toContain(join(tree, "app/app.log"));

    const sample = (path: string, mode = "lines", from = "tail") =>
      api<Record<string, unknown>>(`/agents/e2e-main/sample?path=${encodeURIComponent(path)}&mode=${mode}&from=${from}`);
    const browse = (path: string) =>
      api<{ entries: { name: string }[]; truncated: boolean; error?: { code: string } }>(`/agents/e2e-main/browse?path=${encodeURIComponent(path)}`);
    const code = async (p: Promise<{ status: number; body: unknown }>) => {
      const { status, body } = await p;
      return [status, (body as { error?: { code: string } }).error?.code];
    };

    const tail = await sample(join(tree, "app/app.log"));
    expect(tail.status).toBe(200);
    expect(tail.body).toMatchObject({ lines: 200, truncated: true, binary: false });
    expect(String(tail.body.content).trimEnd().split("\n").at(-1)).toBe("line 1000");
    const head = await sample(join(tree, "app/app.log"), "bytes", "head");
    expect(String(head.body.content).startsWith("line 1\nline 2\n")).toBe(true);

    const listing = await browse(join(tree, "app"));
    expect(listing.status).toBe(200);
    const names = listing.body.entries.map((e) => e.name);
    expect(names).toContain("app.log");
    expect(names).not.toContain("secret.key");
    expect(names).not.toContain("id_rsa");

    expect(await code(sample(join(tree, "app/secret.key")))).toEqual([403, "denied_by_pattern"]);
    expect(await code(sample(join(tree, "app/id_rsa")))).toEqual([403, "denied_by_pattern"]);
    expect(await code(sample(join(tree, "home/.ssh/config")))).toEqual([403, "denied_by_pattern"]);
    expect(await code(browse(join(tree, "home/.ssh")))).toEqual([403, "denied_by_pattern"]);
    expect(await code(sample(join(tree, "app/looks-fine.log")))).toEqual([403, "denied_by_pattern"]);
    expect(await code(sample(join(tree, "app/outside.log")))).toEqual([403, "outside_allowed_roots"]);
    expect(await code(sample("/etc/shadow"))).toEqual([403, "outside_allowed_roots"]);
    expect(await code(sample(join(tree, "app/../../../../etc/passwd")))).toEqual([403, "outside_allowed_roots"]);

    const many = await browse(join(tree, "many"));
    expect(many.body.entries).toHaveLength(1000);
    expect(many.body.truncated).toBe(true);

    const audit = await api<{ items: { action: string }[] }>("/audit?limit=100");
    expect(audit.body.items.filter((e) => e.action.startsWith("agent.browse"))).toHaveLength(12);
  }, 60_000);

  test("deny patterns hold even when the whole filesystem is allowed; browse.enabled false refuses with browse_disabled", async () => {
    const token = await agentToken(2);
    runAgent(writeConfig("root", baseConfig(token, "e2e-root", "  allowedRoots: ['/']")));
    runAgent(writeConfig("off", baseConfig(token, "e2e-off", "  enabled: false")));
    await until(
      async () => (await api<AgentView>("/agents/e2e-root")).body.connected === true && (await api<AgentView>("/agents/e2e-off")).body.connected === true,
      15_000,
    );
    const shadow = await api<{ error: { code: string } }>(`/agents/e2e-root/sample?path=/etc/shadow`);
    expect([shadow.status, shadow.body.error.code]).toEqual([403, "denied_by_pattern"]);
    expect((await api(`/agents/e2e-root/sample?path=/etc/hostname`)).status).toBe(200);
    const off = await api<{ error: { code: string; message: string } }>(`/agents/e2e-off/browse?path=/var/log`);
    expect([off.status, off.body.error.code]).toEqual([403, "browse_disabled"]);
    expect(off.body.error.message).toContain("log browsing is disabled by agent configuration");
  }, 30_000);

  test("killed for 30 s, the server comes back and the agent reconnects by itself, its memory flat meanwhile", async () => {
    const pid = agents.find((p) => p !== service)!.pid;
    const port = server.port;
    await server.stop("SIGKILL");
    const before = processMemory(pid);
    let peak = before;
    for (let i = 0; i < 30; i++) {
      await Bun.sleep(1000);
      const now = processMemory(pid);
      if (now.rss > peak.rss) peak = now;
    }
    expect(peak.anon).toBeLessThanOrEqual(40 * 1024);
    expect(peak.rss - before.rss).toBeLessThan(8 * 1024);
    server = await startServer({ statePath, port, env: { SVC_BOOTSTRAP_ADMINTOKEN: ADMIN, SVC_LOGGING_LEVEL: "warn" } });
    await until(async () => {
      const { body } = await api<AgentView>("/agents/e2e-main");
      return body.connected && body.status === "online";
    }, 75_000);
  }, 150_000);
});

describe("legacy server.url over TLS", () => {
  test.skipIf(process.getuid?.() !== 0)(
    "grpcs://localhost:50051 is normalised to wss://localhost/v1/agent and connects with the configured CA",
    async () => {
      if (await isListening(443)) throw new Error("port 443 is taken on this machine; this test needs it for the legacy URL's default port");
      const tlsState = join(dir, "tls-state.db");
      const admin = bootstrapToken();
      const tls = await startServer({
        statePath: tlsState,
        port: 443,
        waitReady: false,
        env: {
          SVC_BOOTSTRAP_ADMINTOKEN: admin,
          SVC_TLS_CERTFILE: join(TLS_DIR, "cert.pem"),
          SVC_TLS_KEYFILE: join(TLS_DIR, "key.pem"),
          SVC_LOGGING_LEVEL: "warn",
        },
      });
      try {
        const ca = readFileSync(join(TLS_DIR, "cert.pem"), "utf8");
        const call = (path: string, init: RequestInit = {}) =>
          fetch(`https://localhost/api/v1${path}`, {
            ...init,
            headers: { Authorization: `Bearer ${admin}`, "Content-Type": "application/json" },
            tls: { ca },
          } as RequestInit);
        await until(async () => (await call("/system/health").catch(() => null))?.status === 200, 15_000);
        const { token } = (await (await call("/enrollment-tokens", { method: "POST", body: JSON.stringify({ kind: "agent" }) })).json()) as { token: string };
        const config = writeConfig(
          "legacy",
          `server:\n  url: grpcs://localhost:50051\n  token: ${token}\nagent:\n  id: e2e-legacy\n  stateDir: ${dir}/state-legacy\ncertificates:\n  caCertPath: ${join(TLS_DIR, "cert.pem")}\n`,
        );
        const proc = runAgent(config);
        await until(async () => {
          const res = await call("/agents/e2e-legacy");
          return res.status === 200 && ((await res.json()) as AgentView).connected;
        }, 15_000);
        proc.kill();
      } finally {
        await tls.stop();
      }
    },
    60_000,
  );
});
