/**
 * Discovery against the real host: child processes with names of our choosing,
 * real sockets and a real HTTP server; log places and config files under temp roots.
 */
import { afterAll, expect, test } from "bun:test";
import { copyFileSync, existsSync, linkSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { CollectorConfig, ServiceFacts } from "../types.ts";
import type { DetectedService } from "../../shared/agent-protocol.ts";
import { detectCollectors } from "./collectors.ts";
import { hostFacts } from "./host.ts";
import { logSources } from "./logsources.ts";
import { serviceFacts } from "./services.ts";

const children: Bun.Subprocess[] = [];
const dirs: string[] = [];

afterAll(async () => {
  for (const child of children) child.kill();
  await Promise.all(children.map((child) => child.exited));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "svc-discovery-"));
  dirs.push(dir);
  return dir;
}

/** The bun binary under another name (a hard link when the filesystem allows, else a copy), so the process shows that name. */
function renamedBun(dir: string, name: string): string {
  const path = join(dir, name);
  try {
    linkSync(process.execPath, path);
  } catch {
    copyFileSync(process.execPath, path);
  }
  return path;
}

/** Runs `script` with the renamed binary and returns its first stdout line, parsed as JSON. */
async function startChild(binary: string, script: string): Promise<{ child: Bun.Subprocess<"ignore", "pipe", "inherit">; ready: unknown }> {
  const scriptPath = join(dirname(binary), `${Math.random().toString(36).slice(2)}.ts`);
  writeFileSync(scriptPath, script);
  const child = Bun.spawn([binary, scriptPath], { stdin: "ignore", stdout: "pipe", stderr: "inherit" });
  children.push(child);
  const reader = child.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`child exited before it was ready: ${text}`);
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return { child, ready: JSON.parse(text.slice(0, text.indexOf("\n"))) };
}

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = net.createServer().listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const LISTENER = `
import net from "node:net";
import dgram from "node:dgram";
const listen = (host) => new Promise((resolve) => {
  const server = net.createServer().on("error", () => resolve(null));
  server.listen(0, host, () => resolve(server.address().port));
});
const udp = await new Promise((resolve) => {
  const socket = dgram.createSocket("udp4");
  socket.bind(0, "127.0.0.1", () => resolve(socket.address().port));
});
console.log(JSON.stringify({ tcp: await listen("127.0.0.1"), tcp6: await listen("::1"), udp }));
`;

test("serviceFacts sees a process by its executable name, and its TCP and UDP listeners with its pid", async () => {
  const name = `svc-fp-test-${Math.random().toString(36).slice(2, 10)}`;
  const { child, ready } = await startChild(renamedBun(tempDir(), name), LISTENER);
  const ports = ready as { tcp: number; tcp6: number | null; udp: number };

  const facts = await serviceFacts();

  const seen = facts.processes.find((p) => p.pid === child.pid);
  expect(seen?.name).toBe(name); // longer than the 15 bytes of comm: completed from the exe link
  expect(seen?.command).toContain(name);
  expect(seen?.user).not.toBeNull();
  expect(facts.listening).toContainEqual({ port: ports.tcp, protocol: "tcp", address: "127.0.0.1", pid: child.pid, process: name });
  expect(facts.listening).toContainEqual({ port: ports.udp, protocol: "udp", address: "127.0.0.1", pid: child.pid, process: name });
  if (ports.tcp6 !== null) {
    expect(facts.listening).toContainEqual({ port: ports.tcp6, protocol: "tcp", address: "::1", pid: child.pid, process: name });
  }
  for (const entry of facts.listening) expect(entry.port).toBeGreaterThan(0);
  expect(Array.isArray(facts.units)).toBe(true);
});

test("hostFacts gives hostname, OS, CPU, memory and addresses", async () => {
  const facts = await hostFacts();
  expect(facts.hostname.length).toBeGreaterThan(0);
  expect(facts.os.platform).toBe(process.platform);
  expect(facts.os.arch).toBe(process.arch);
  expect(facts.os.kernel.length).toBeGreaterThan(0);
  expect(facts.cpu.cores).toBeGreaterThan(0);
  expect(facts.memoryBytes).toBeGreaterThan(0);
  for (const ip of facts.ips) expect(net.isIP(ip)).not.toBe(0);
  expect(facts.ips).not.toContain("127.0.0.1");
});

test("hostFacts in a Kubernetes pod reports the pod, namespace and node from the environment", async () => {
  const script = `import { hostFacts } from ${JSON.stringify(join(import.meta.dir, "host.ts"))}; console.log(JSON.stringify((await hostFacts()).container));`;
  const env = { ...process.env, KUBERNETES_SERVICE_HOST: "10.0.0.1", POD_NAME: "agent-x7k2p", POD_NAMESPACE: "observability", NODE_NAME: "node-3" };
  const child = Bun.spawn([process.execPath, "-e", script], { env, stdout: "pipe", stderr: "inherit" });
  children.push(child);
  const container = JSON.parse(await new Response(child.stdout).text());
  const namespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";
  expect(container).toEqual({
    inContainer: true,
    kubernetes: true,
    podName: "agent-x7k2p",
    namespace: existsSync(namespaceFile) ? expect.any(String) : "observability",
    nodeName: "node-3",
  });
});

const NO_FACTS: ServiceFacts = { processes: [], listening: [], units: [] };

test("detectCollectors finds Runtime O and Runtime R by their bootstrap files under the root", async () => {
  const root = tempDir();
  for (const path of ["etc/otel-collector/config.yaml", "etc/rcfg-runtime/config.rcfg"]) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), "");
  }
  const found = await detectCollectors([], NO_FACTS, undefined, root);
  expect(found.map(({ metricsAlive, ...rest }) => rest)).toEqual([
    {
      name: "otel-collector",
      collectorType: "otelcol",
      binaryPath: null,
      configPath: "/etc/otel-collector/config.yaml",
      serviceName: null,
      running: false,
      pid: null,
      nativeRemoteConfig: false,
      metricsUrl: "http://127.0.0.1:8888/metrics",
    },
    {
      name: "rcfg-runtime",
      collectorType: "alloy",
      binaryPath: null,
      configPath: "/etc/rcfg-runtime/config.rcfg",
      serviceName: null,
      running: false,
      pid: null,
      nativeRemoteConfig: true,
      metricsUrl: "http://127.0.0.1:12345/metrics",
    },
  ]);
  expect(await detectCollectors([], NO_FACTS, undefined, tempDir())).toEqual([]);
});

const METRICS_SERVER = `
const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request) =>
  new URL(request.url).pathname === "/metrics" ? new Response("up 1\\n") : new Response("", { status: 404 }) });
console.log(JSON.stringify({ port: server.port }));
`;

test("detectCollectors finds a running otelcol process, and probes configured collectors' metrics endpoints", async () => {
  const binary = renamedBun(tempDir(), "otelcol");
  const { child, ready } = await startChild(binary, METRICS_SERVER);
  const { port } = ready as { port: number };
  const facts = await serviceFacts();

  const [detected] = await detectCollectors([], facts, undefined, tempDir());
  expect(detected).toMatchObject({ collectorType: "otelcol", name: "otelcol", binaryPath: binary, running: true, pid: child.pid });

  const config = (overrides: Partial<CollectorConfig>): CollectorConfig => ({
    name: "edge",
    binaryPath: binary,
    configPath: null,
    serviceName: null,
    collectorType: null,
    nativeRemoteConfig: false,
    metricsUrl: `http://127.0.0.1:${port}/metrics`,
    ...overrides,
  });
  const configured = await detectCollectors(
    [
      config({}),
      config({ name: "closed", metricsUrl: `http://127.0.0.1:${await closedPort()}/metrics` }),
      config({ name: "not-found", metricsUrl: `http://127.0.0.1:${port}/other` }),
      config({ name: "absent", binaryPath: "/opt/nowhere/rcfg-runtime", nativeRemoteConfig: true }),
    ],
    facts,
  );
  expect(configured.map((c) => [c.name, c.collectorType, c.running, c.pid, c.metricsAlive])).toEqual([
    ["edge", "otelcol", true, child.pid, true],
    ["closed", "otelcol", true, child.pid, false],
    ["not-found", "otelcol", true, child.pid, false],
    ["absent", "alloy", false, null, true],
  ]);

  // No type configured: the type is guessed from the binary, and its defaults follow it.
  const [guessed] = await detectCollectors(
    [config({ name: "guessed", binaryPath: "/opt/nowhere/rcfg-runtime", nativeRemoteConfig: null, metricsUrl: null })],
    facts,
    async () => false,
  );
  expect(guessed).toMatchObject({ collectorType: "alloy", nativeRemoteConfig: true, metricsUrl: "http://127.0.0.1:12345/metrics" });
});

test("logSources lists the journal, syslog, container trees and services' files, deduplicated and sorted", async () => {
  const root = tempDir();
  for (const dir of ["run/systemd/journal", "var/log/journal", "var/lib/docker/containers", "var/log/pods", "var/log/containers"]) {
    mkdirSync(join(root, dir), { recursive: true });
  }
  writeFileSync(join(root, "var/log/syslog"), "");
  const service = (fingerprint: string, logFiles: string[]) => ({ fingerprint, logFiles }) as DetectedService;
  const services = [service("nginx", ["/var/log/nginx/error.log", "/var/log/nginx/access.log"]), service("cron", ["/var/log/syslog"])];

  expect(await logSources(services, root)).toEqual([
    { kind: "journald", path: "journald", service: null },
    { kind: "file", path: "/var/log/nginx/access.log", service: "nginx" },
    { kind: "file", path: "/var/log/nginx/error.log", service: "nginx" },
    { kind: "file", path: "/var/log/syslog", service: "cron" },
    { kind: "docker", path: "/var/lib/docker/containers/*/*-json.log", service: null },
    { kind: "kubernetes", path: "/var/log/containers/*.log", service: null },
    { kind: "kubernetes", path: "/var/log/pods/*/*/*.log", service: null },
  ]);
  expect(await logSources([], tempDir())).toEqual([]);
});
