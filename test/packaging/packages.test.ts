/**
 * scripts/package.sh (`bun run package`) for this machine's architecture, built before the
 * tests by scripts/build-for-tests.sh (test/built.ts): the agent
 * and server debs and rpms hold the files the spec places, with their modes and
 * maintainer scripts, and never /etc/svc/config.yaml. In a mount namespace where
 * systemd seems to run (systemctl a stub that records its calls), the deb and rpm
 * scripts reload, enable, start, try-restart and stop as they should, and never call
 * systemctl with DPKG_ROOT set. Installed with dpkg into a throwaway root, an upgrade
 * to a newer build replaces the binary and leaves the operator's config byte for byte;
 * remove and purge keep it, so purging the agent on a host where the server reads the
 * same file leaves the server its config. rpm into a throwaway root installs and erases
 * the server rpm's files and keeps the config.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../server/config/load.ts";
import { builtPackages, PACKAGED } from "../built.ts";
import { removeTempDirs, REPO, tempDir } from "../process/spawn.ts";
import { HOST_ARCH, IS_ROOT, ok, RPM_ARCH, run, sha256 } from "./tools.ts";

const V1 = PACKAGED.v1;
const V2 = PACKAGED.v2;
const AGENT_DEB = `svc-agent_${V1}_${HOST_ARCH}.deb`;
const AGENT_RPM = `svc-agent-${V1}.${RPM_ARCH}.rpm`;
const SERVER_DEB = `svc-server_${V1}_${HOST_ARCH}.deb`;
const SERVER_RPM = `svc-server-${V1}.${RPM_ARCH}.rpm`;
const TEMPLATES: Record<string, string> = {
  "config.yaml.example": "installer/templates/agent-config.yaml",
  "otelcol-bootstrap.yaml": "installer/templates/otelcol-bootstrap.yaml",
  "supervisor.yaml": "installer/templates/supervisor.yaml",
  "alloy-bootstrap.alloy": "installer/templates/alloy-bootstrap.alloy",
};
let v1: string;
let v2: string;
/** The agent deb of V1, unpacked with dpkg-deb -x. */
let agentTree: string;

beforeAll(() => {
  v1 = builtPackages(V1);
  v2 = builtPackages(V2);
  agentTree = tempDir("svc-packages-tree-");
  ok(["dpkg-deb", "-x", join(v1, AGENT_DEB), agentTree]);
});

afterAll(removeTempDirs);

/** `dpkg-deb -c`: path (without the leading ".") → "mode owner/group" of every file and link. */
function debFiles(deb: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const line of ok(["dpkg-deb", "-c", deb]).trim().split("\n")) {
    const [mode, owner, , , , path] = line.split(/\s+/);
    if (!mode!.startsWith("d")) files.set(path!.replace(/^\./, ""), `${mode} ${owner}`);
  }
  return files;
}

/** `rpm -qp --dump`: path → { sha256, "mode owner/group" } of every file. */
function rpmFiles(rpm: string): Map<string, { sha256: string; mode: string }> {
  const files = new Map<string, { sha256: string; mode: string }>();
  for (const line of ok(["rpm", "-qp", "--dump", rpm]).trim().split("\n")) {
    const [path, , , digest, mode, user, group] = line.split(" ");
    if (!mode!.startsWith("04")) files.set(path!, { sha256: digest!, mode: `${mode!.slice(-4)} ${user}/${group}` });
  }
  return files;
}

/**
 * What is wrong with a maintainer script: it must be POSIX sh (dash parses it), stop on
 * errors, have its helpers spliced in, and never touch /etc/svc beyond testing that the
 * config exists: the config is the operator's, and may be both programs' (shared/host-config.ts).
 */
function scriptProblems(text: string): string[] {
  const problems: string[] = [];
  if (!/^(#!\/bin\/sh\n)?(#[^\n]*\n)*set -e\n/.test(text)) problems.push("does not start with set -e");
  if (/^#UNIT_HELPERS#$/m.test(text)) problems.push("helpers not spliced in");
  if (text.includes("systemctl") && !text.includes("systemd_live() {")) problems.push("calls systemctl without the systemd_live guard");
  const parsed = Bun.spawnSync(["dash", "-n"], { stdin: new TextEncoder().encode(text), stderr: "pipe" });
  if (parsed.exitCode !== 0) problems.push(`dash -n: ${parsed.stderr}`);
  const touching = text
    .split("\n")
    .filter((line) => line.includes("/etc/svc") && !line.trim().startsWith("#") && !line.includes("[ -f /etc/svc/config.yaml ]"))
    .map((line) => line.trim());
  if (touching.length > 0) problems.push(`touches /etc/svc: ${touching.join("; ")}`);
  return problems;
}

/** The four deb maintainer scripts, extracted with dpkg-deb -e. */
function debScripts(deb: string): Record<string, string> {
  const control = tempDir("svc-packages-control-");
  ok(["dpkg-deb", "-e", deb, control]);
  return Object.fromEntries(["preinst", "postinst", "prerm", "postrm"].map((name) => [name, readFileSync(join(control, name), "utf8")]));
}

describe("package.sh", () => {
  test("refuses a version dpkg and rpm would read differently, and an unknown --arch, naming the problem", () => {
    const version = run(["bash", join(REPO, "scripts/package.sh"), "--out", tempDir("svc-packages-refused-")], { env: { SVC_PACKAGE_VERSION: "1.0-rc1" } });
    expect(version.code).toBe(1);
    expect(version.err).toContain("package.sh: version '1.0-rc1' must start with a digit");
    const arch = run(["bash", join(REPO, "scripts/package.sh"), "--arch", "sparc"]);
    expect(arch.code).toBe(1);
    expect(arch.err).toBe("package.sh: --arch takes amd64, arm64 or all, not 'sparc'\n");
  });

  test("writes SHA256SUMS for exactly the agent packages it built", () => {
    expect(readdirSync(v1).sort()).toEqual([AGENT_RPM, "SHA256SUMS", AGENT_DEB, SERVER_DEB, SERVER_RPM].sort());
    expect(ok(["sha256sum", "--check", "--strict", "SHA256SUMS"], { cwd: v1 })).toBe(`${AGENT_DEB}: OK\n${AGENT_RPM}: OK\n`);
  });
});

describe("svc-agent deb", () => {
  test("control fields and its four maintainer scripts", () => {
    const deb = join(v1, AGENT_DEB);
    const field = (name: string) => ok(["dpkg-deb", "-f", deb, name]).trim();
    expect([field("Package"), field("Version"), field("Architecture")]).toEqual(["svc-agent", V1, HOST_ARCH]);
    expect(Number(field("Installed-Size"))).toBeGreaterThan(50_000); // KiB: the binary carries the Bun runtime
    const info = ok(["dpkg-deb", "-I", deb]);
    const scripts = debScripts(deb);
    for (const [name, text] of Object.entries(scripts)) {
      expect(info).toMatch(new RegExp(`\\*\\s+${name}\\s+#!/bin/sh`)); // listed as executable
      expect({ name, problems: scriptProblems(text) }).toEqual({ name, problems: [] });
    }
    expect(scripts.postinst).toContain("systemctl try-restart svc-agent.service");
    expect(scripts.prerm).toContain("systemctl stop svc-agent.service");
  });

  test("binary 0755, the unit in /lib/systemd/system, the templates and copyright; no /etc", () => {
    expect(Object.fromEntries(debFiles(join(v1, AGENT_DEB)))).toEqual({
      "/usr/local/bin/svc-agent": "-rwxr-xr-x root/root",
      "/lib/systemd/system/svc-agent.service": "-rw-r--r-- root/root",
      "/usr/share/svc-agent/config.yaml.example": "-rw-r--r-- root/root",
      "/usr/share/svc-agent/otelcol-bootstrap.yaml": "-rw-r--r-- root/root",
      "/usr/share/svc-agent/supervisor.yaml": "-rw-r--r-- root/root",
      "/usr/share/svc-agent/alloy-bootstrap.alloy": "-rw-r--r-- root/root",
      "/usr/share/doc/svc-agent/copyright": "-rw-r--r-- root/root",
    });
    expect(existsSync(join(agentTree, "etc"))).toBe(false);
    expect(readFileSync(join(agentTree, "lib/systemd/system/svc-agent.service"), "utf8")).toBe(readFileSync(join(REPO, "systemd/svc-agent.service"), "utf8"));
    for (const [name, source] of Object.entries(TEMPLATES)) {
      expect(readFileSync(join(agentTree, "usr/share/svc-agent", name), "utf8")).toBe(readFileSync(join(REPO, source), "utf8"));
    }
    expect(ok([join(agentTree, "usr/local/bin/svc-agent"), "--version"]).trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe("svc-agent rpm", () => {
  const rpm = () => join(v1, AGENT_RPM);

  test("name, version and arch; no generated dependencies; no config files", () => {
    expect(ok(["rpm", "-qp", "--qf", "%{NAME} %{VERSION} %{ARCH}", rpm()])).toBe(`svc-agent ${V1} ${RPM_ARCH}`);
    for (const requirement of ok(["rpm", "-qpR", rpm()]).trim().split("\n")) expect(requirement).toMatch(/^(rpmlib\(|\/bin\/sh$)/);
    expect(ok(["rpm", "-qpc", rpm()]).trim()).toBe("");
  });

  test("the same binary, unit and templates as the deb, the unit in /usr/lib/systemd/system; no /etc", () => {
    const files = rpmFiles(rpm());
    expect(
      ok(["rpm", "-qlp", rpm()])
        .trim()
        .split("\n")
        .filter((path) => path.startsWith("/etc")),
    ).toEqual([]);
    expect(Object.fromEntries(files)).toEqual({
      "/usr/local/bin/svc-agent": { sha256: sha256(join(agentTree, "usr/local/bin/svc-agent")), mode: "0755 root/root" },
      "/usr/lib/systemd/system/svc-agent.service": { sha256: sha256(join(REPO, "systemd/svc-agent.service")), mode: "0644 root/root" },
      ...Object.fromEntries(
        Object.entries(TEMPLATES).map(([name, source]) => [`/usr/share/svc-agent/${name}`, { sha256: sha256(join(REPO, source)), mode: "0644 root/root" }]),
      ),
      "/usr/share/doc/svc-agent/copyright": { sha256: sha256(join(REPO, "packaging/copyright")), mode: "0644 root/root" },
    });
  });

  test("%post, %preun and %postun are POSIX sh that reload, enable, try-restart and stop only under systemd", () => {
    const scripts = ok(["rpm", "-qp", "--scripts", rpm()]);
    for (const header of ["postinstall scriptlet (using /bin/sh):", "preuninstall scriptlet (using /bin/sh):", "postuninstall scriptlet (using /bin/sh):"]) {
      expect(scripts).toContain(header);
    }
    const tag = (name: string) => ok(["rpm", "-qp", "--qf", `%{${name}}`, rpm()]);
    for (const name of ["POSTIN", "PREUN", "POSTUN"]) expect({ name, problems: scriptProblems(tag(name)) }).toEqual({ name, problems: [] });
    expect(tag("POSTIN")).toContain("systemctl try-restart svc-agent.service");
    expect(tag("PREUN")).toContain("systemctl stop svc-agent.service");
    expect(tag("POSTUN")).toContain("unit_disable svc-agent.service");
  });
});

describe("svc-server deb", () => {
  test("binary, unit, sysusers entry, and the agent packages with their SHA256SUMS in downloads/", () => {
    const deb = join(v1, SERVER_DEB);
    expect(ok(["dpkg-deb", "-f", deb, "Package", "Version", "Architecture"])).toBe(`Package: svc-server\nVersion: ${V1}\nArchitecture: ${HOST_ARCH}\n`);
    expect(Object.fromEntries(debFiles(deb))).toEqual({
      "/usr/local/bin/svc-server": "-rwxr-xr-x root/root",
      "/lib/systemd/system/svc-server.service": "-rw-r--r-- root/root",
      "/usr/lib/sysusers.d/svc-server.conf": "-rw-r--r-- root/root",
      "/usr/share/doc/svc-server/copyright": "-rw-r--r-- root/root",
      [`/usr/share/svc-server/downloads/${AGENT_DEB}`]: "-rw-r--r-- root/root",
      [`/usr/share/svc-server/downloads/${AGENT_RPM}`]: "-rw-r--r-- root/root",
      "/usr/share/svc-server/downloads/SHA256SUMS": "-rw-r--r-- root/root",
    });
    const scripts = debScripts(deb);
    for (const [name, text] of Object.entries(scripts)) expect({ name, problems: scriptProblems(text) }).toEqual({ name, problems: [] });
    expect(scripts.postinst).toMatch(/adduser --quiet --system --group .* svc\n[\s\S]*useradd --system --user-group .* svc\n/);
  });
});

describe("svc-server rpm", () => {
  const rpm = () => join(v1, SERVER_RPM);
  const tag = (name: string) => ok(["rpm", "-qp", "--qf", `%{${name}}`, rpm()]);

  test("name, version and arch; no generated dependencies; no config files, nothing under /etc", () => {
    expect(ok(["rpm", "-qp", "--qf", "%{NAME} %{VERSION} %{ARCH}", rpm()])).toBe(`svc-server ${V1} ${RPM_ARCH}`);
    for (const requirement of ok(["rpm", "-qpR", rpm()]).trim().split("\n")) expect(requirement).toMatch(/^(rpmlib\(|\/bin\/sh$)/);
    expect(ok(["rpm", "-qpc", rpm()]).trim()).toBe("");
    expect(
      ok(["rpm", "-qlp", rpm()])
        .trim()
        .split("\n")
        .filter((path) => path.startsWith("/etc")),
    ).toEqual([]);
  });

  test("the deb's binary, the unit in /usr/lib/systemd/system, the sysusers entry, and the same downloads", () => {
    const fromDeb = (path: string) => {
      const tar = Bun.spawnSync(["dpkg-deb", "--fsys-tarfile", join(v1, SERVER_DEB)]).stdout;
      const file = Bun.spawnSync(["tar", "-xO", `.${path}`], { stdin: tar }).stdout;
      return new Bun.CryptoHasher("sha256").update(file).digest("hex");
    };
    const file = (path: string) => ({ sha256: sha256(join(REPO, path)), mode: "0644 root/root" });
    const download = (name: string) => ({ sha256: sha256(join(v1, name)), mode: "0644 root/root" });
    expect(Object.fromEntries(rpmFiles(rpm()))).toEqual({
      "/usr/local/bin/svc-server": { sha256: fromDeb("/usr/local/bin/svc-server"), mode: "0755 root/root" },
      "/usr/lib/systemd/system/svc-server.service": file("systemd/svc-server.service"),
      "/usr/lib/sysusers.d/svc-server.conf": file("packaging/svc-server.sysusers.conf"),
      "/usr/share/doc/svc-server/copyright": file("packaging/copyright"),
      [`/usr/share/svc-server/downloads/${AGENT_DEB}`]: download(AGENT_DEB),
      [`/usr/share/svc-server/downloads/${AGENT_RPM}`]: download(AGENT_RPM),
      "/usr/share/svc-server/downloads/SHA256SUMS": download("SHA256SUMS"),
    });
  });

  test("%pre makes the user svc; %post, %preun and %postun are POSIX sh that reload, enable, try-restart and stop only under systemd", () => {
    const scripts = ok(["rpm", "-qp", "--scripts", rpm()]);
    for (const when of ["preinstall", "postinstall", "preuninstall", "postuninstall"]) expect(scripts).toContain(`${when} scriptlet (using /bin/sh):`);
    for (const name of ["PREIN", "POSTIN", "PREUN", "POSTUN"]) expect({ name, problems: scriptProblems(tag(name)) }).toEqual({ name, problems: [] });
    expect(tag("PREIN")).toMatch(/if ! getent passwd svc >\/dev\/null; then\n\s+useradd --system --user-group --home-dir \/var\/lib\/svc .* svc\n/);
    expect(tag("POSTIN")).toContain("unit_enable /usr/lib/systemd/system/svc-server.service");
    expect(tag("POSTIN")).toContain("systemctl try-restart svc-server.service");
    expect(tag("PREUN")).toContain("systemctl stop svc-server.service");
    expect(tag("POSTUN")).toContain("unit_disable svc-server.service");
  });
});

describe.skipIf(!IS_ROOT)("maintainer scripts where systemd runs", () => {
  interface Outcome {
    calls: string[];
    enabled: boolean;
    config: boolean;
  }
  let deb: Record<string, string>;
  let rpm: Record<string, string>;
  let serverRpm: Record<string, string>;
  let scratch: string;
  const rpmScripts = (file: string) =>
    Object.fromEntries(["PREIN", "POSTIN", "PREUN", "POSTUN"].map((tag) => [tag, ok(["rpm", "-qp", "--qf", `%{${tag}}`, join(v1, file)])]));

  beforeAll(() => {
    deb = debScripts(join(v1, AGENT_DEB));
    rpm = rpmScripts(AGENT_RPM);
    serverRpm = rpmScripts(SERVER_RPM);
    scratch = tempDir("svc-packages-systemd-");
  });

  /**
   * Runs scripts in order, each with its arguments, in a private mount namespace where
   * systemd seems to run: tmpfs over /run (with /run/systemd/system) and over /etc
   * (holding only the config and the enable link of `unit` when `given` says so).
   * systemctl and useradd are stubs that record their calls; getent finds the user svc
   * only when `given.user`. The host's /etc and /run are never touched.
   */
  function underSystemd(
    steps: [script: string, ...args: string[]][],
    given: { config?: boolean; enabled?: boolean; user?: boolean } = {},
    env: Record<string, string> = {},
    unit = "svc-agent.service",
  ): Outcome {
    const log = join(scratch, "systemctl.log");
    writeFileSync(log, "");
    const stubs: Record<string, string> = {
      systemctl: `echo "$*" >> "${log}"`,
      useradd: `echo "useradd $*" >> "${log}"`,
      getent: given.user ? "exit 0" : "exit 2",
    };
    for (const [name, body] of Object.entries(stubs)) {
      writeFileSync(join(scratch, name), `#!/bin/sh\n${body}\n`);
      chmodSync(join(scratch, name), 0o755);
    }
    const wants = "/etc/systemd/system/multi-user.target.wants";
    const driver = [
      "set -e",
      "mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/system",
      `mount -t tmpfs tmpfs /etc && mkdir -p ${wants}`,
      given.config ? "mkdir /etc/svc && echo 'server: {}' > /etc/svc/config.yaml" : "",
      given.enabled ? `ln -s /lib/systemd/system/${unit} ${wants}/` : "",
      ...steps.map(([script, ...args], i) => {
        writeFileSync(join(scratch, `step${i}`), script);
        return `sh ${join(scratch, `step${i}`)} ${args.join(" ")}`;
      }),
      `if [ -L ${wants}/${unit} ]; then echo enabled; fi`,
      "if [ -f /etc/svc/config.yaml ]; then echo config; fi",
    ];
    const state = ok(["unshare", "--mount", "--propagation", "private", "sh", "-c", driver.join("\n")], {
      env: { PATH: `${scratch}:${process.env.PATH}`, ...env },
    });
    const calls = readFileSync(log, "utf8").trim();
    return { calls: calls === "" ? [] : calls.split("\n"), enabled: state.includes("enabled"), config: state.includes("config") };
  }

  test("deb: a fresh install enables, reloads, and starts only with a config", () => {
    expect(
      underSystemd([
        [deb.preinst!, "install"],
        [deb.postinst!, "configure"],
      ]),
    ).toEqual({ calls: ["daemon-reload"], enabled: true, config: false });
    expect(
      underSystemd(
        [
          [deb.preinst!, "install"],
          [deb.postinst!, "configure"],
        ],
        { config: true },
      ),
    ).toEqual({
      calls: ["daemon-reload", "start svc-agent.service"],
      enabled: true,
      config: true,
    });
  });

  test("deb: an upgrade try-restarts and keeps the operator's enable or disable", () => {
    const upgrade: [string, ...string[]][] = [
      [deb.prerm!, "upgrade", V2],
      [deb.preinst!, "upgrade", V1],
      [deb.postrm!, "upgrade", V2],
      [deb.postinst!, "configure", V1],
    ];
    const calls = ["daemon-reload", "try-restart svc-agent.service"];
    expect(underSystemd(upgrade, { config: true, enabled: true })).toEqual({ calls, enabled: true, config: true });
    expect(underSystemd(upgrade, { config: true })).toEqual({ calls, enabled: false, config: true });
  });

  test("deb: remove stops and disables and keeps the config; so does purge", () => {
    expect(
      underSystemd(
        [
          [deb.prerm!, "remove"],
          [deb.postrm!, "remove"],
        ],
        { config: true, enabled: true },
      ),
    ).toEqual({
      calls: ["stop svc-agent.service", "daemon-reload"],
      enabled: false,
      config: true,
    });
    expect(underSystemd([[deb.postrm!, "purge"]], { config: true })).toEqual({ calls: ["daemon-reload"], enabled: false, config: true });
  });

  test("deb: with DPKG_ROOT set (dpkg --root) no script calls systemctl, even where systemd runs", () => {
    const root = tempDir("svc-packages-dpkgroot-");
    const steps: [string, ...string[]][] = [
      [deb.preinst!, "install"],
      [deb.postinst!, "configure"],
      [deb.prerm!, "remove"],
      [deb.postrm!, "remove"],
    ];
    expect(underSystemd(steps, { config: true }, { DPKG_ROOT: root }).calls).toEqual([]);
  });

  test("rpm: install, upgrade (new %post, old %preun and %postun) and erase", () => {
    expect(underSystemd([[rpm.POSTIN!, "1"]], { config: true })).toEqual({ calls: ["daemon-reload", "start svc-agent.service"], enabled: true, config: true });
    expect(
      underSystemd(
        [
          [rpm.POSTIN!, "2"],
          [rpm.PREUN!, "1"],
          [rpm.POSTUN!, "1"],
        ],
        { config: true },
      ),
    ).toEqual({
      calls: ["daemon-reload", "try-restart svc-agent.service"],
      enabled: false,
      config: true,
    });
    expect(
      underSystemd(
        [
          [rpm.PREUN!, "0"],
          [rpm.POSTUN!, "0"],
        ],
        { config: true, enabled: true },
      ),
    ).toEqual({
      calls: ["stop svc-agent.service", "daemon-reload"],
      enabled: false,
      config: true,
    });
  });

  test("server rpm: install makes the user and enables, upgrade try-restarts, erase keeps the config", () => {
    const useradd = "useradd --system --user-group --home-dir /var/lib/svc --no-create-home --shell /sbin/nologin svc";
    const unit = "svc-server.service";
    expect(
      underSystemd(
        [
          [serverRpm.PREIN!, "1"],
          [serverRpm.POSTIN!, "1"],
        ],
        { config: true },
        {},
        unit,
      ),
    ).toEqual({
      calls: [useradd, "daemon-reload", "start svc-server.service"],
      enabled: true,
      config: true,
    });
    expect(
      underSystemd(
        [
          [serverRpm.PREIN!, "1"],
          [serverRpm.POSTIN!, "1"],
        ],
        {},
        {},
        unit,
      ),
    ).toEqual({ calls: [useradd, "daemon-reload"], enabled: true, config: false });
    const upgrade: [string, ...string[]][] = [
      [serverRpm.PREIN!, "2"],
      [serverRpm.POSTIN!, "2"],
      [serverRpm.PREUN!, "1"],
      [serverRpm.POSTUN!, "1"],
    ];
    expect(underSystemd(upgrade, { config: true, user: true }, {}, unit)).toEqual({
      calls: ["daemon-reload", "try-restart svc-server.service"],
      enabled: false,
      config: true,
    });
    expect(
      underSystemd(
        [
          [serverRpm.PREUN!, "0"],
          [serverRpm.POSTUN!, "0"],
        ],
        { config: true, enabled: true },
        {},
        unit,
      ),
    ).toEqual({
      calls: ["stop svc-server.service", "daemon-reload"],
      enabled: false,
      config: true,
    });
  });
});

describe.skipIf(!IS_ROOT)("dpkg into a throwaway root", () => {
  let root: string;
  let stubs: string;
  const config = () => join(root, "etc/svc/config.yaml");
  /** Where the enable link of a unit points (inside the root, so never followed here); null when there is none. */
  const enabled = (unit: string) => {
    try {
      return readlinkSync(join(root, "etc/systemd/system/multi-user.target.wants", unit));
    } catch {
      return null;
    }
  };
  const CONFIG_TEXT = "# the operator's\nserver:\n  url: https://svc.example.com\n  token: svcen_abcdefghijklmnopqrstuvwxyz0123456789\n";

  /** dpkg on the root, maintainer scripts run outside it with DPKG_ROOT set; systemctl is a recording stub. */
  function dpkg(...args: string[]): string {
    return ok(["dpkg", `--root=${root}`, "--force-script-chrootless", `--log=${join(root, "var/log/dpkg.log")}`, ...args], {
      env: { PATH: `${stubs}:${process.env.PATH}` },
    });
  }
  const status = (name: string) => run(["dpkg-query", `--admindir=${root}/var/lib/dpkg`, "-W", "-f", "${Status} ${Version}", name]).out;

  /** An empty dpkg database in a new throwaway root, which dpkg() then works on. */
  function newRoot(): void {
    root = tempDir("svc-packages-root-");
    for (const path of ["var/lib/dpkg/info", "var/lib/dpkg/updates", "var/log"]) mkdirSync(join(root, path), { recursive: true });
    for (const path of ["var/lib/dpkg/status", "var/lib/dpkg/available"]) writeFileSync(join(root, path), "");
  }

  beforeAll(() => {
    newRoot();
    stubs = tempDir("svc-packages-stubs-");
    writeFileSync(join(stubs, "systemctl"), `#!/bin/sh\necho "$*" >> "${stubs}/systemctl.log"\n`);
    chmodSync(join(stubs, "systemctl"), 0o755);
  });

  test("install, upgrade to a newer build, remove, reinstall, purge: the config survives them all", () => {
    dpkg("-i", join(v1, AGENT_DEB));
    expect(status("svc-agent")).toBe(`install ok installed ${V1}`);
    expect(statSync(join(root, "usr/local/bin/svc-agent")).mode & 0o7777).toBe(0o755);
    expect(enabled("svc-agent.service")).toBe("/lib/systemd/system/svc-agent.service");
    expect(existsSync(join(root, "etc/svc"))).toBe(false); // the package ships no config

    // What install.sh writes: the operator's config, mode 0600.
    mkdirSync(join(root, "etc/svc"), { mode: 0o700 });
    writeFileSync(config(), CONFIG_TEXT, { mode: 0o600 });
    const before = lstatSync(config());
    const oldBinary = statSync(join(root, "usr/local/bin/svc-agent")).ino;

    dpkg("-i", join(v2, `svc-agent_${V2}_${HOST_ARCH}.deb`));
    expect(status("svc-agent")).toBe(`install ok installed ${V2}`);
    expect(statSync(join(root, "usr/local/bin/svc-agent")).ino).not.toBe(oldBinary); // a new file, not the old one
    const after = lstatSync(config());
    expect(readFileSync(config(), "utf8")).toBe(CONFIG_TEXT);
    expect([after.ino, after.mode, after.uid, after.gid, after.mtimeMs]).toEqual([before.ino, before.mode, before.uid, before.gid, before.mtimeMs]);
    expect(enabled("svc-agent.service")).toBe("/lib/systemd/system/svc-agent.service");

    dpkg("--remove", "svc-agent");
    expect(status("svc-agent")).toBe(`deinstall ok config-files ${V2}`);
    expect(existsSync(join(root, "usr/local/bin/svc-agent"))).toBe(false);
    expect(enabled("svc-agent.service")).toBeNull(); // disabled
    expect(readFileSync(config(), "utf8")).toBe(CONFIG_TEXT);
    expect(lstatSync(config()).mode).toBe(before.mode);

    // A reinstall after remove is enabled again (preinst), the config still untouched.
    dpkg("-i", join(v2, `svc-agent_${V2}_${HOST_ARCH}.deb`));
    expect(enabled("svc-agent.service")).toBe("/lib/systemd/system/svc-agent.service");
    expect(readFileSync(config(), "utf8")).toBe(CONFIG_TEXT);

    dpkg("--purge", "svc-agent");
    expect(status("svc-agent")).toBe("");
    expect(existsSync(join(root, "usr/local/bin/svc-agent"))).toBe(false);
    expect(readFileSync(config(), "utf8")).toBe(CONFIG_TEXT);
    expect(lstatSync(config()).mode).toBe(before.mode);
    expect(enabled("svc-agent.service")).toBeNull();
    expect(existsSync(join(stubs, "systemctl.log"))).toBe(false);
  }, 60_000);

  test("the server deb installs its downloads and an enabled unit that verifies, and purge keeps the config", () => {
    dpkg("-i", join(v1, SERVER_DEB));
    expect(status("svc-server")).toBe(`install ok installed ${V1}`);
    const downloads = join(root, "usr/share/svc-server/downloads");
    expect(readFileSync(join(downloads, "SHA256SUMS"), "utf8")).toBe(readFileSync(join(v1, "SHA256SUMS"), "utf8"));
    expect(ok(["sha256sum", "--check", "--strict", "SHA256SUMS"], { cwd: downloads })).toBe(`${AGENT_DEB}: OK\n${AGENT_RPM}: OK\n`);
    expect(enabled("svc-server.service")).toBe("/lib/systemd/system/svc-server.service");
    // In another root no user is created: sysusers.d makes svc at that system's first boot.
    expect(existsSync(join(root, "etc/passwd"))).toBe(false);
    expect(readFileSync(join(root, "usr/lib/sysusers.d/svc-server.conf"), "utf8")).toContain('u svc - "svc server" /var/lib/svc');
    // The unit as installed, against the binary as installed.
    const verify = run(["systemd-analyze", "verify", `--root=${root}`, "--man=no", "--recursive-errors=no", "svc-server.service"]);
    expect(verify.err).toBe("");
    expect(verify.code).toBe(0);

    mkdirSync(join(root, "etc/svc"), { recursive: true, mode: 0o750 });
    writeFileSync(config(), "listen: 0.0.0.0:443\n", { mode: 0o640 });
    dpkg("--purge", "svc-server");
    expect(status("svc-server")).toBe("");
    expect(existsSync(join(root, "usr/local/bin/svc-server"))).toBe(false);
    expect(enabled("svc-server.service")).toBeNull();
    expect(readFileSync(config(), "utf8")).toBe("listen: 0.0.0.0:443\n");
    expect(existsSync(join(stubs, "systemctl.log"))).toBe(false);
  }, 60_000);

  test("purging svc-agent where svc-server is installed leaves the server its config, and the server still starts from it", () => {
    newRoot();
    dpkg("-i", join(v1, SERVER_DEB));
    dpkg("-i", join(v1, AGENT_DEB));
    // One file with both programs' sections (shared/host-config.ts), as on such a host.
    const shared = readFileSync(join(REPO, "server/config/testdata/shared-host.yaml"), "utf8");
    mkdirSync(join(root, "etc/svc"), { mode: 0o750 });
    writeFileSync(config(), shared, { mode: 0o640 });
    // The installed agent binary accepts the file too.
    expect(run([join(root, "usr/local/bin/svc-agent"), "validate", "--config", config()]).code).toBe(0);
    dpkg("--purge", "svc-agent");
    expect(status("svc-agent")).toBe("");
    expect(status("svc-server")).toBe(`install ok installed ${V1}`);
    expect(readFileSync(config(), "utf8")).toBe(shared);
    expect(lstatSync(config()).mode & 0o777).toBe(0o640);
    expect(enabled("svc-server.service")).toBe("/lib/systemd/system/svc-server.service");
    // What the server reads from the file the agent's purge left.
    expect(loadConfig({ path: config(), env: {} }).listen).toEqual({ host: "0.0.0.0", port: 443 });
  }, 60_000);
});

describe.skipIf(!IS_ROOT)("rpm into a throwaway root", () => {
  test("the server and agent rpms install their files; erasing either keeps the shared config", () => {
    const root = tempDir("svc-packages-rpmroot-");
    // The root has no /bin/sh: --nodeps for the scriptlets' requirement of it, and
    // --noscripts since rpm runs them chrooted into the root ("where systemd runs" runs them).
    const rpm = (...args: string[]) => ok(["rpm", `--root=${root}`, "--nodeps", "--noscripts", ...args]);
    ok(["rpm", `--root=${root}`, "--initdb"]);
    rpm("-i", join(v1, SERVER_RPM), join(v1, AGENT_RPM));
    expect(ok(["rpm", `--root=${root}`, "-q", "svc-server", "svc-agent"])).toBe(`svc-server-${V1}-1.${RPM_ARCH}\nsvc-agent-${V1}-1.${RPM_ARCH}\n`);
    expect(statSync(join(root, "usr/local/bin/svc-server")).mode & 0o7777).toBe(0o755);
    expect(ok(["sha256sum", "--check", "--strict", "SHA256SUMS"], { cwd: join(root, "usr/share/svc-server/downloads") })).toBe(
      `${AGENT_DEB}: OK\n${AGENT_RPM}: OK\n`,
    );
    expect(rpm("-V", "svc-server")).toBe(""); // every file as packaged: digest, mode, owner

    const config = join(root, "etc/svc/config.yaml");
    const shared = readFileSync(join(REPO, "server/config/testdata/shared-host.yaml"), "utf8");
    mkdirSync(join(root, "etc/svc"), { recursive: true, mode: 0o750 });
    writeFileSync(config, shared, { mode: 0o640 });
    rpm("-e", "svc-agent");
    expect(existsSync(join(root, "usr/local/bin/svc-agent"))).toBe(false);
    expect(readFileSync(config, "utf8")).toBe(shared);
    rpm("-e", "svc-server");
    expect(run(["rpm", `--root=${root}`, "-q", "svc-server"]).code).not.toBe(0);
    expect(existsSync(join(root, "usr/local/bin/svc-server"))).toBe(false);
    expect(existsSync(join(root, "usr/share/svc-server"))).toBe(false);
    expect(readFileSync(config, "utf8")).toBe(shared);
  }, 60_000);
});
