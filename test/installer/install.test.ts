/**
 * installer/install.sh against a running server on loopback, installing the real
 * agent .deb (scripts/build-for-tests.sh builds it before the tests) into a throwaway root (dpkg --root), and stand-ins for the upstream
 * collector packages (built here with dpkg-deb, named and laid out like the
 * releases') from the server's collector mirror, downloads.dir/collectors. Only
 * systemctl is a stub, which records its calls. Checks the files written and their
 * modes, that a second run changes nothing, --dry-run, and failures that name their step.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { parse } from "yaml";
import { builtPackages, PACKAGED } from "../built.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { BUN, freePort, REPO, removeTempDirs, tempDir } from "../process/spawn.ts";

const isRoot = process.getuid?.() === 0;
const SCRIPT = join(REPO, "installer/install.sh");
let server: TestServer;
let downloads: string;
let stubs: string;
let sums: string;
let mirror: string;
let mirrorSums: string;
const COLLECTOR_VERSION = "0.159.0";
const ALLOY_VERSION = "1.18.1";

beforeAll(async () => {
  if (!isRoot) return;
  downloads = tempDir("svc-install-downloads-");
  // The agent packages scripts/build-for-tests.sh built; copied, since the tests below rewrite SHA256SUMS.
  const packages = builtPackages(PACKAGED.v2);
  for (const file of readdirSync(packages)) copyFileSync(join(packages, file), join(downloads, file));
  sums = readFileSync(join(downloads, "SHA256SUMS"), "utf8");
  mirror = join(downloads, "collectors");
  mirrorSums = buildStandIns(mirror);
  stubs = tempDir("svc-install-stubs-");
  writeFileSync(join(stubs, "systemctl"), `#!/bin/sh\necho "$*" >> "${stubs}/systemctl.log"\n`);
  chmodSync(join(stubs, "systemctl"), 0o755);
  const port = freePort();
  server = await startTestServer({ SVC_LISTEN: `127.0.0.1:${port}`, SVC_EXTERNALURL: `http://127.0.0.1:${port}`, SVC_DOWNLOADS_DIR: downloads });
});

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

function hostArch(): string {
  return process.arch === "arm64" ? "arm64" : "amd64";
}

/**
 * Stand-ins for the upstream packages, with their asset names and the files and unit
 * paths of the real ones (opentelemetry-collector-releases v0.159.0 nfpm contents,
 * grafana/alloy v1.18.1 packaging.mk), and a SHA256SUMS over them. Their "binaries"
 * are scripts: nothing here runs them. Answers the SHA256SUMS text.
 */
function buildStandIns(out: string): string {
  const arch = hostArch();
  const packages: { asset: string; control: Record<string, string>; files: Record<string, string>; conffiles?: string[] }[] = [
    {
      asset: `otelcol-contrib_${COLLECTOR_VERSION}_linux_${arch}.deb`,
      control: { Package: "otelcol-contrib", Version: COLLECTOR_VERSION },
      files: {
        "usr/bin/otelcol-contrib": "#!/bin/sh\necho otelcol-contrib stand-in\n",
        "lib/systemd/system/otelcol-contrib.service": "[Service]\nExecStart=/usr/bin/otelcol-contrib $OTELCOL_OPTIONS\n[Install]\nWantedBy=multi-user.target\n",
        "etc/otelcol-contrib/config.yaml": "receivers: {}\n",
      },
      conffiles: ["/etc/otelcol-contrib/config.yaml"],
    },
    {
      asset: `opampsupervisor_${COLLECTOR_VERSION}_linux_${arch}.deb`,
      control: { Package: "opampsupervisor", Version: COLLECTOR_VERSION },
      files: {
        "usr/bin/opampsupervisor": "#!/bin/sh\necho opampsupervisor stand-in\n",
        "lib/systemd/system/opampsupervisor.service": "[Service]\nExecStart=/usr/bin/opampsupervisor $OPAMP_OPTIONS\n[Install]\nWantedBy=multi-user.target\n",
        "etc/opampsupervisor/opampsupervisor.conf": 'OPAMP_OPTIONS="--config=/etc/opampsupervisor/config.yaml"\n',
      },
      conffiles: ["/etc/opampsupervisor/opampsupervisor.conf"],
    },
    {
      asset: `alloy-${ALLOY_VERSION}-1.${arch}.deb`,
      control: { Package: "alloy", Version: `${ALLOY_VERSION}-1` },
      files: {
        "usr/bin/alloy": "#!/bin/sh\necho alloy stand-in\n",
        "usr/lib/systemd/system/alloy.service":
          "[Service]\nEnvironmentFile=/etc/default/alloy\nExecStart=/usr/bin/alloy run $CUSTOM_ARGS --storage.path=/var/lib/alloy/data $CONFIG_FILE\n[Install]\nWantedBy=multi-user.target\n",
        "etc/default/alloy": '# Grafana Alloy settings\nCONFIG_FILE="/etc/alloy/config.alloy"\nCUSTOM_ARGS=""\nRESTART_ON_UPGRADE=true\n',
        "etc/alloy/config.alloy": "logging {}\n",
      },
      conffiles: ["/etc/default/alloy", "/etc/alloy/config.alloy"],
    },
  ];
  mkdirSync(out, { recursive: true });
  const lines: string[] = [];
  for (const { asset, control, files, conffiles } of packages) {
    const tree = tempDir("svc-install-standin-");
    mkdirSync(join(tree, "DEBIAN"));
    const fields = { ...control, Architecture: arch, Maintainer: "svc tests <tests@svc.invalid>", Description: `stand-in for ${control.Package}` };
    writeFileSync(
      join(tree, "DEBIAN/control"),
      Object.entries(fields)
        .map(([key, value]) => `${key}: ${value}\n`)
        .join(""),
    );
    if (conffiles) writeFileSync(join(tree, "DEBIAN/conffiles"), conffiles.map((path) => `${path}\n`).join(""));
    for (const [path, body] of Object.entries(files)) {
      mkdirSync(dirname(join(tree, path)), { recursive: true });
      writeFileSync(join(tree, path), body, { mode: path.includes("/bin/") ? 0o755 : 0o644 });
    }
    const build = Bun.spawnSync(["dpkg-deb", "--root-owner-group", "-b", tree, join(out, asset)], { stdout: "pipe", stderr: "pipe" });
    if (build.exitCode !== 0) throw new Error(`dpkg-deb ${asset}: ${build.stderr}`);
    lines.push(
      `${createHash("sha256")
        .update(readFileSync(join(out, asset)))
        .digest("hex")}  ${asset}\n`,
    );
  }
  const text = lines.join("");
  writeFileSync(join(out, "SHA256SUMS"), text);
  return text;
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

/** The server's collector mirror, so no test reaches the internet. */
const mirrorArgs = () => ["--package-base-url", `${server.base}/downloads/collectors`];

const installed = (root: string, name: string) =>
  Bun.spawnSync(["dpkg-query", `--admindir=${root}/var/lib/dpkg`, "-W", "-f", "${Status} ${Version}", name]).stdout.toString();

/** The groups the packages' maintainer scripts create in a real root (they do not run in this one: it has no shell). */
function withServiceGroups(root: string): string {
  mkdirSync(join(root, "etc"), { recursive: true });
  writeFileSync(join(root, "etc/group"), "root:x:0:\nopampsupervisor:x:991:\nalloy:x:992:\n");
  return root;
}

describe.skipIf(!isRoot)("install.sh", () => {
  test("installs the agent package, writes its config 0600 and the Runtime O bootstrap 0640, enables the unit; a second run changes nothing", async () => {
    const root = freshRoot();
    const agentToken = await mint("agent");
    const collectorToken = await mint("opamp");
    const args = ["--agent-token", agentToken, "--token", collectorToken, "--mode", "opamp", "--root", root, ...mirrorArgs()];
    const first = await install(args);
    expect(first.err).toBe("");
    expect(first.code).toBe(0);
    // This root has no /etc/group (no package script ran in it to create one).
    expect(first.out).toContain("left /etc/opampsupervisor/config.yaml to root: there is no group opampsupervisor");

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

  test("Runtime O: installs otelcol-contrib and opampsupervisor from the server's mirror, writes both files for the supervisor's group, enables the supervisor and not the collector's unit; a second run changes nothing", async () => {
    const root = withServiceGroups(freshRoot());
    const token = await mint("opamp");
    const args = ["--token", token, "--mode", "opamp", "--root", root, ...mirrorArgs()];
    const first = await install(args);
    expect(first.err).toBe("");
    expect(first.code).toBe(0);
    expect(installed(root, "otelcol-contrib")).toBe(`install ok installed ${COLLECTOR_VERSION}`);
    expect(installed(root, "opampsupervisor")).toBe(`install ok installed ${COLLECTOR_VERSION}`);
    expect(existsSync(join(root, "usr/bin/otelcol-contrib"))).toBe(true);
    expect(existsSync(join(root, "lib/systemd/system/opampsupervisor.service"))).toBe(true);
    for (const path of ["etc/otel-collector/config.yaml", "etc/opampsupervisor/config.yaml"]) {
      expect(modeOf(join(root, path))).toBe("640");
      expect(statSync(join(root, path)).gid).toBe(991);
      expect(readFileSync(join(root, path), "utf8")).toContain(`Bearer ${token}`);
    }
    // The supervisor runs the collector binary the package installed.
    expect(parse(readFileSync(join(root, "etc/opampsupervisor/config.yaml"), "utf8")).agent.executable).toBe("/usr/bin/otelcol-contrib");
    const calls = readFileSync(join(stubs, "systemctl.log"), "utf8");
    expect(calls).toContain(`--root=${root} disable otelcol-contrib.service\n`);
    expect(calls).toContain(`--root=${root} enable opampsupervisor.service\n`);
    expect(calls).not.toContain(`--root=${root} enable otelcol-contrib.service`);

    const before = snapshot(root);
    const second = await install(args);
    expect(second.code).toBe(0);
    expect(second.out).toContain(`kept otelcol-contrib ${COLLECTOR_VERSION}: already installed`);
    expect(second.out).toContain(`kept opampsupervisor ${COLLECTOR_VERSION}: already installed`);
    expect(second.out).toContain("kept /etc/opampsupervisor/config.yaml: it exists");
    expect(snapshot(root)).toEqual(before);
  }, 60_000);

  test("Runtime R: the snippet points at the mirror; installs alloy, writes the remotecfg bootstrap and makes the unit's CONFIG_FILE read it; a second run changes nothing", async () => {
    const root = withServiceGroups(freshRoot());
    const { id } = await server.call<{ id: string }>("/collectors", "POST", { name: "install-rcfg", managementMode: "rcfg-remotecfg" });
    const { snippet } = await server.call<{ snippet: string }>(`/collectors/snippet?collectorId=${id}`, "POST");
    expect(snippet).toContain(`--package-base-url ${server.base}/downloads/collectors`);
    const words = snippet.split(" | sudo sh -s -- ")[1]!.split(" ");
    const args = [...words.slice(words.indexOf("--endpoint") + 2), "--root", root];
    const first = await install(args);
    expect(first.err).toBe("");
    expect(first.code).toBe(0);
    expect(installed(root, "alloy")).toBe(`install ok installed ${ALLOY_VERSION}-1`);
    const bootstrap = join(root, "etc/rcfg-runtime/config.rcfg");
    expect(modeOf(bootstrap)).toBe("640");
    expect(statSync(bootstrap).gid).toBe(992);
    expect(readFileSync(bootstrap, "utf8")).toContain(`id             = "${id}"`);
    const defaults = readFileSync(join(root, "etc/default/alloy"), "utf8");
    expect(defaults.match(/^CONFIG_FILE=.*$/gm)).toEqual(['CONFIG_FILE="/etc/rcfg-runtime/config.rcfg"']);
    expect(defaults).toContain('CUSTOM_ARGS=""');
    expect(readFileSync(join(stubs, "systemctl.log"), "utf8")).toContain(`--root=${root} enable alloy.service\n`);

    const before = snapshot(root);
    const second = await install(args);
    expect(second.code).toBe(0);
    expect(second.out).toContain(`kept alloy ${ALLOY_VERSION}-1: already installed`);
    expect(second.out).toContain("kept /etc/default/alloy: CONFIG_FILE is /etc/rcfg-runtime/config.rcfg");
    expect(snapshot(root)).toEqual(before);
  }, 60_000);

  test("a collector package whose SHA-256 does not match the mirror's SHA256SUMS is not installed", async () => {
    const root = freshRoot();
    writeFileSync(join(mirror, "SHA256SUMS"), mirrorSums.replace(/^[0-9a-f]{64}(?=  otelcol-contrib)/m, "0".repeat(64)));
    try {
      const tampered = await install(["--token", await mint("opamp"), "--root", root, ...mirrorArgs()]);
      expect(tampered.code).toBe(1);
      expect(tampered.err).toMatch(/^install\.sh: checking otelcol-contrib_\S+\.deb failed: SHA-256 is [0-9a-f]{64}, \S+\/SHA256SUMS says 0{64}\n  hint: /m);
      expect(installed(root, "otelcol-contrib")).toBe("");
      expect(existsSync(join(root, "usr/bin/otelcol-contrib"))).toBe(false);
    } finally {
      writeFileSync(join(mirror, "SHA256SUMS"), mirrorSums);
    }
    const missing = await install(["--token", await mint("opamp"), "--root", root, ...mirrorArgs(), "--collector-version", "0.1.0"]);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/^install\.sh: checking otelcol-contrib_0\.1\.0_linux_\w+\.deb failed: .*names no SHA-256/m);
  }, 60_000);

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
    const dry = await install(["--agent-token", await mint("agent"), "--token", await mint("opamp"), "--root", root, "--dry-run", ...mirrorArgs()]);
    expect(dry.code).toBe(0);
    expect(dry.out).toContain("would write /etc/svc/config.yaml (mode 600)");
    expect(dry.out).toMatch(/would install svc-agent_\S+\.deb/);
    expect(dry.out).toContain("would write /etc/opampsupervisor/config.yaml (mode 640)");
    const asset = `otelcol-contrib_${COLLECTOR_VERSION}_linux_${hostArch()}.deb`;
    expect(dry.out).toContain(
      `would download ${server.base}/downloads/collectors/${asset}, check its SHA-256 against ${server.base}/downloads/collectors/SHA256SUMS, and install otelcol-contrib ${COLLECTOR_VERSION}`,
    );
    expect(dry.out).toContain(`and install opampsupervisor ${COLLECTOR_VERSION}`);
    expect(dry.out).toContain(`would run: systemctl --root=${root} disable otelcol-contrib.service`);
    expect(dry.out).toContain(`would run: systemctl --root=${root} enable opampsupervisor.service`);
    expect(snapshot(root)).toEqual(before);
  });

  test("--dry-run without a mirror names the upstream release assets and their checksum files (nothing is fetched)", async () => {
    const root = freshRoot();
    const arch = hostArch();
    const releases = "https://github.com/open-telemetry/opentelemetry-collector-releases/releases/download";
    const opamp = await install(["--token", await mint("opamp"), "--root", root, "--dry-run"]);
    expect(opamp.code).toBe(0);
    expect(opamp.out).toContain(
      `would download ${releases}/v0.159.0/otelcol-contrib_0.159.0_linux_${arch}.deb, check its SHA-256 against ${releases}/v0.159.0/otelcol-contrib_0.159.0_linux_${arch}.deb.sha256`,
    );
    expect(opamp.out).toContain(`would download ${releases}/cmd%2Fopampsupervisor%2Fv0.159.0/opampsupervisor_0.159.0_linux_${arch}.deb, check`);
    // Releases before v0.158.0 publish one checksums list instead of a file per asset.
    const older = await install(["--token", await mint("opamp"), "--root", root, "--dry-run", "--collector-version", "0.157.0"]);
    expect(older.out).toContain(`against ${releases}/v0.157.0/opentelemetry-collector-releases_otelcol-contrib_checksums.txt`);
    expect(older.out).toContain(`against ${releases}/cmd%2Fopampsupervisor%2Fv0.157.0/checksums.txt`);
    const { id } = await server.call<{ id: string }>("/collectors", "POST", { name: "install-dry-rcfg", managementMode: "rcfg-remotecfg" });
    const { token } = await server.call<{ token: string }>(`/collectors/${id}/otlp-token`, "POST");
    const alloy = await install(["--token", token, "--mode", "rcfg-remotecfg", "--root", root, "--dry-run", "--alloy-version", "1.17.0"]);
    expect(alloy.code).toBe(0);
    expect(alloy.out).toContain(
      `would download https://github.com/grafana/alloy/releases/download/v1.17.0/alloy-1.17.0-1.${arch}.deb, check its SHA-256 against https://github.com/grafana/alloy/releases/download/v1.17.0/SHA256SUMS`,
    );
    expect(alloy.out).toContain('would set CONFIG_FILE="/etc/rcfg-runtime/config.rcfg" in /etc/default/alloy');
    const bad = await install(["--token", token, "--mode", "rcfg-remotecfg", "--root", root, "--alloy-version", "v1.17.0"]);
    expect([bad.code, bad.err.split("\n")[0]]).toEqual([1, "install.sh: arguments failed: version 'v1.17.0' is not a release number"]);
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
    expect([insecure.code, insecure.err.split("\n")[0]]).toEqual([
      1,
      "install.sh: arguments failed: --endpoint http://10.0.0.1:8080 is not https; tokens would cross the network in the clear",
    ]);
  }, 60_000);
});
