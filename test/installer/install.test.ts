/**
 * installer/install.sh against a running server on loopback, installing the real
 * agent .deb into a throwaway root (dpkg --root). Only systemctl is a stub, which
 * records its calls. Checks the files written and their modes, that a second run
 * changes nothing, --dry-run, and failures that name their step.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { parse } from "yaml";
import { startTestServer, type TestServer } from "../harness.ts";
import { BUN, freePort, REPO, removeTempDirs, tempDir } from "../process/spawn.ts";

const isRoot = process.getuid?.() === 0;
const SCRIPT = join(REPO, "installer/install.sh");
let server: TestServer;
let downloads: string;
let stubs: string;
let sums: string;

beforeAll(async () => {
  if (!isRoot) return;
  downloads = tempDir("svc-install-downloads-");
  const build = Bun.spawnSync(["bash", join(REPO, "scripts/package.sh"), "--arch", hostArch(), "--no-server", "--out", downloads], {
    stdout: "pipe",
    stderr: "pipe",
  });
  if (build.exitCode !== 0) throw new Error(`building the agent package failed: ${build.stderr}`);
  sums = readFileSync(join(downloads, "SHA256SUMS"), "utf8");
  stubs = tempDir("svc-install-stubs-");
  writeFileSync(join(stubs, "systemctl"), `#!/bin/sh\necho "$*" >> "${stubs}/systemctl.log"\n`);
  chmodSync(join(stubs, "systemctl"), 0o755);
  const port = freePort();
  server = await startTestServer({ SVC_LISTEN: `127.0.0.1:${port}`, SVC_EXTERNALURL: `http://127.0.0.1:${port}`, SVC_DOWNLOADS_DIR: downloads });
}, 240_000);

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

function hostArch(): string {
  return process.arch === "arm64" ? "arm64" : "amd64";
}

/** A root dpkg can install into: its database and log directory. */
function freshRoot(): string {
  const root = tempDir("svc-install-root-");
  for (const dir of ["var/lib/dpkg/info", "var/lib/dpkg/updates", "var/log"]) mkdirSync(join(root, dir), { recursive: true });
  for (const file of ["var/lib/dpkg/status", "var/lib/dpkg/available"]) writeFileSync(join(root, file), "");
  return root;
}

/** Asynchronous: the server answering install.sh runs in this process's event loop. */
async function install(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/_proxy$/i.test(name)));
  const run = Bun.spawn(["sh", SCRIPT, "--endpoint", server.base, ...args], {
    env: { ...env, PATH: `${stubs}:${process.env.PATH}` },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited]);
  return { code, out, err };
}

/** Every path under root with its mode, size and modification time: what "nothing changed" compares. */
function snapshot(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const stat = lstatSync(path);
      out.push(`${relative(root, path)} ${(stat.mode & 0o7777).toString(8)} ${stat.size} ${stat.mtimeMs}`);
      if (stat.isDirectory()) walk(path);
    }
  };
  walk(root);
  return out;
}

const modeOf = (path: string) => (lstatSync(path).mode & 0o777).toString(8);

async function mint(kind: "agent" | "opamp"): Promise<string> {
  return (await server.call<{ token: string }>("/enrollment-tokens", "POST", { kind })).token;
}

describe.skipIf(!isRoot)("install.sh", () => {
  test("installs the agent package, writes its config 0600 and the Runtime O bootstrap 0640, enables the unit; a second run changes nothing", async () => {
    const root = freshRoot();
    const agentToken = await mint("agent");
    const collectorToken = await mint("opamp");
    const args = ["--agent-token", agentToken, "--token", collectorToken, "--mode", "opamp", "--root", root];
    const first = await install(args);
    expect(first.err).toBe("");
    expect(first.code).toBe(0);

    expect(modeOf(join(root, "usr/local/bin/svc-agent"))).toBe("755");
    const config = join(root, "etc/svc/config.yaml");
    expect(modeOf(config)).toBe("600");
    expect(parse(readFileSync(config, "utf8"))).toMatchObject({ server: { url: server.base, token: agentToken } });
    const validate = Bun.spawnSync([BUN, join(REPO, "agent/main.ts"), "validate", "--config", config], { stdout: "pipe", stderr: "pipe" });
    expect(validate.exitCode).toBe(0);
    for (const path of ["etc/otel-collector/config.yaml", "etc/opampsupervisor/config.yaml"]) {
      expect(modeOf(join(root, path))).toBe("640");
      expect(readFileSync(join(root, path), "utf8")).toContain(`Bearer ${collectorToken}`);
    }
    const status = Bun.spawnSync(["dpkg-query", `--admindir=${root}/var/lib/dpkg`, "-W", "-f", "${Status}", "svc-agent"]).stdout.toString();
    expect(status).toBe("install ok installed");
    expect(readFileSync(join(stubs, "systemctl.log"), "utf8")).toContain(`--root=${root} enable svc-agent.service`);

    const before = snapshot(root);
    const second = await install(args);
    expect(second.code).toBe(0);
    expect(second.out).toContain("kept /etc/svc/config.yaml: it exists");
    expect(second.out).toMatch(/kept svc-agent \S+: already installed/);
    expect(second.out).toContain("kept /etc/otel-collector/config.yaml: it exists");
    expect(snapshot(root)).toEqual(before);
  }, 120_000);

  test("an existing config is kept, and replaced only with --force", async () => {
    const root = freshRoot();
    mkdirSync(join(root, "etc/svc"), { recursive: true });
    writeFileSync(join(root, "etc/svc/config.yaml"), "server:\n  url: https://old.example.com\n", { mode: 0o600 });
    const token = await mint("agent");
    expect((await install(["--agent-token", token, "--root", root])).code).toBe(0);
    expect(readFileSync(join(root, "etc/svc/config.yaml"), "utf8")).toContain("old.example.com");
    const forced = await install(["--agent-token", token, "--root", root, "--force"]);
    expect(forced.code).toBe(0);
    expect(forced.out).toContain("wrote /etc/svc/config.yaml (mode 600)");
    expect(parse(readFileSync(join(root, "etc/svc/config.yaml"), "utf8")).server.token).toBe(token);
  }, 60_000);

  test("--dry-run says what it would do and changes nothing", async () => {
    const root = freshRoot();
    const before = snapshot(root);
    const dry = await install(["--agent-token", await mint("agent"), "--token", await mint("opamp"), "--root", root, "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.out).toContain("would write /etc/svc/config.yaml (mode 600)");
    expect(dry.out).toMatch(/would install svc-agent_\S+\.deb/);
    expect(dry.out).toContain("would write /etc/opampsupervisor/config.yaml (mode 640)");
    expect(snapshot(root)).toEqual(before);
  });

  test("failures name their step and a hint, exit non-zero and leave nothing half-done", async () => {
    const root = freshRoot();
    const before = snapshot(root);
    const badToken = await install(["--agent-token", `svcen_${"x".repeat(40)}`, "--root", root]);
    expect(badToken.code).toBe(1);
    expect(badToken.err).toMatch(/^install\.sh: fetching \/etc\/svc\/config\.yaml failed: .*\n  hint: check the token is live/m);
    expect(snapshot(root)).toEqual(before);

    writeFileSync(join(downloads, "SHA256SUMS"), sums.replace(/^[0-9a-f]{64}/gm, "0".repeat(64)));
    try {
      const tampered = await install(["--agent-token", await mint("agent"), "--root", root]);
      expect(tampered.code).toBe(1);
      expect(tampered.err).toMatch(/^install\.sh: checking svc-agent_\S+\.deb failed: SHA-256 is [0-9a-f]{64}, SHA256SUMS says 0{64}/m);
      expect(existsSync(join(root, "usr/local/bin/svc-agent"))).toBe(false);
    } finally {
      writeFileSync(join(downloads, "SHA256SUMS"), sums);
    }

    const insecure = await install(["--agent-token", "svcen_x", "--root", root, "--endpoint", "http://10.0.0.1:8080"]);
    expect([insecure.code, insecure.err.split("\n")[0]]).toEqual([1, "install.sh: arguments failed: --endpoint http://10.0.0.1:8080 is not https; tokens would cross the network in the clear"]);
  }, 60_000);
});
