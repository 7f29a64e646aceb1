/**
 * installer/kubernetes/ and packaging/container/: every manifest parses, each
 * kustomization names files that exist, and the DaemonSet, the server Deployment
 * and the Dockerfiles hold the properties their comments promise. The example
 * configs are run through the agent's and the server's own config loaders.
 */
import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, posix, relative } from "node:path";
import { parseAllDocuments } from "yaml";
import { AgentConfigError, parseAgentConfig } from "../../agent/config.ts";
import { envName, KEYS, type KeySpec } from "../../server/config/keys.ts";
import { ConfigError, loadConfig } from "../../server/config/load.ts";

// Manifests are free-form YAML; the checks below say what they expect of them.
type Obj = any;

const REPO = join(import.meta.dir, "..", "..");
const K8S = join(REPO, "installer", "kubernetes");
const read = (path: string) => readFileSync(join(REPO, path), "utf8");

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? yamlFiles(path) : /\.ya?ml$/.test(entry.name) ? [path] : [];
  });
}

/** Every document of a file, parsed as Kubernetes does (YAML 1.1: 0400 is octal); any error fails. */
function parseFile(path: string): Obj[] {
  const docs = parseAllDocuments(readFileSync(path, "utf8"), { version: "1.1" });
  const list = Array.isArray(docs) ? docs : [docs];
  for (const doc of list) expect(doc.errors.map(String), relative(REPO, path)).toEqual([]);
  return list.map((doc) => doc.toJS()).filter((value) => value !== null);
}

/** The objects a kustomization's resources hold, following directory bases (patches are not applied). */
function resources(dir: string): Obj[] {
  const kustomization = parseFile(join(dir, "kustomization.yaml"))[0];
  return (kustomization.resources as string[]).flatMap((entry) => {
    const path = join(dir, entry);
    expect(existsSync(path), `${relative(REPO, dir)}: resource ${entry}`).toBe(true);
    return statSync(path).isDirectory() ? resources(path) : parseFile(path);
  });
}

function one(objects: Obj[], kind: string, name?: string): Obj {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  expect(found.length, `${kind} ${name ?? ""}`).toBe(1);
  return found[0];
}

const KUSTOMIZATIONS = yamlFiles(K8S)
  .filter((path) => path.endsWith("/kustomization.yaml"))
  .map(dirname);

describe("manifests", () => {
  test("every YAML document parses to a named Kubernetes object", () => {
    const files = yamlFiles(K8S);
    expect(files.length).toBeGreaterThan(8);
    for (const path of files) {
      for (const object of parseFile(path)) {
        expect(typeof object.apiVersion, relative(REPO, path)).toBe("string");
        expect(typeof object.kind, relative(REPO, path)).toBe("string");
        if (object.kind !== "Kustomization") expect(object.metadata?.name, relative(REPO, path)).toBeTruthy();
      }
    }
  });

  test("kustomizations list every manifest beside them, never an example, and retag only images they use", () => {
    expect(KUSTOMIZATIONS.map((dir) => relative(K8S, dir)).sort()).toEqual(["agent", "agent-containerd", "server"]);
    for (const dir of KUSTOMIZATIONS) {
      const kustomization = parseFile(join(dir, "kustomization.yaml"))[0];
      const listed = new Set<string>(kustomization.resources);
      for (const name of readdirSync(dir).filter((n) => /\.ya?ml$/.test(n) && n !== "kustomization.yaml")) {
        // Examples hold placeholder secrets: they must never be applied by `kubectl apply -k`.
        expect(listed.has(name), `${relative(REPO, dir)}/${name}`).toBe(!name.includes(".example."));
      }
      const images = new Set(
        resources(dir)
          .flatMap((o) => o.spec?.template?.spec?.containers ?? [])
          .map((c: Obj) => c.image.split(":")[0]),
      );
      for (const image of kustomization.images ?? []) expect(images.has(image.name), `${relative(REPO, dir)} images: ${image.name}`).toBe(true);
    }
  });

  test("the namespace file is the same in both kustomizations (applying one must not strip the other's labels)", () => {
    expect(read("installer/kubernetes/server/namespace.yaml")).toBe(read("installer/kubernetes/agent/namespace.yaml"));
  });

  test("no RBAC objects: neither the agent nor the server calls the Kubernetes API", () => {
    const all = KUSTOMIZATIONS.flatMap(resources);
    expect(all.filter((o) => /Role(Binding)?$/.test(o.kind))).toEqual([]);
    for (const account of all.filter((o) => o.kind === "ServiceAccount")) expect(account.automountServiceAccountToken).toBe(false);
  });

  // Never skipped: a missing kubectl is a failure that says what to install (npm test's scripts/system-deps.sh fetches one from the npm registry).
  test("kubectl kustomize builds every kustomization", () => {
    if (!Bun.which("kubectl")) {
      throw new Error(
        "kubectl is not installed, so the kustomizations under installer/kubernetes cannot be built. Install kubectl 1.21 or newer " +
          "(https://kubernetes.io/docs/tasks/tools/); Debian bookworm's kubernetes-client (1.20, kustomize v2.0.3) is too old for them.",
      );
    }
    for (const dir of KUSTOMIZATIONS) {
      const run = Bun.spawnSync(["kubectl", "kustomize", dir], { stderr: "pipe" });
      expect(run.exitCode, `${relative(REPO, dir)}: ${run.stderr.toString()}`).toBe(0);
    }
    const containerd = Bun.spawnSync(["kubectl", "kustomize", join(K8S, "agent-containerd")]).stdout.toString();
    expect(containerd).toContain("mountPath: /var/log\n");
    expect(containerd).not.toContain("/var/lib/docker/containers");
  });
});

describe("agent DaemonSet", () => {
  const objects = resources(join(K8S, "agent"));
  const ds = one(objects, "DaemonSet", "svc-agent");
  const pod = ds.spec.template.spec;
  const [container] = pod.containers;
  const mountOf = (volume: string) => container.volumeMounts.find((m: Obj) => m.name === volume);

  test("selects its own pods, in namespace svc, on every node", () => {
    expect(ds.metadata.namespace).toBe("svc");
    expect(one(objects, "Namespace").metadata.name).toBe("svc");
    expect(ds.spec.template.metadata.labels).toMatchObject(ds.spec.selector.matchLabels);
    expect(pod.containers).toHaveLength(1);
    expect(pod.tolerations).toContainEqual({ operator: "Exists" });
  });

  test("reads its config from the Secret, mounted read-only where --config points", () => {
    const volume = pod.volumes.find((v: Obj) => v.secret?.secretName === "svc-agent-config");
    const file = volume.secret.items?.find((i: Obj) => i.key === "config.yaml")?.path ?? "config.yaml";
    const mount = mountOf(volume.name);
    expect(mount).toMatchObject({ mountPath: "/etc/svc-agent", readOnly: true });
    expect(volume.secret.defaultMode & 0o077).toBe(0); // the token is readable by the agent alone
    const args: string[] = container.args;
    expect(args[args.indexOf("--config") + 1]).toBe(posix.join(mount.mountPath, file));
    expect(args).toContain("/etc/svc-agent/config.yaml");
  });

  test("host paths are mounted read-only at the same path, /var/log and Docker's container logs among them; only the agent's state directory is writable", () => {
    const hostPaths = pod.volumes.filter((v: Obj) => v.hostPath);
    expect(hostPaths.map((v: Obj) => v.hostPath.path).sort()).toEqual(["/var/lib/docker/containers", "/var/lib/svc-agent", "/var/log"]);
    for (const volume of hostPaths) {
      if (volume.hostPath.path === "/var/lib/svc-agent") continue;
      expect(mountOf(volume.name)).toMatchObject({ mountPath: volume.hostPath.path, readOnly: true });
    }
    // Its credential survives a new pod on the same node; the default agent.stateDir.
    const state = hostPaths.find((v: Obj) => v.hostPath.path === "/var/lib/svc-agent");
    expect(mountOf(state.name).mountPath).toBe("/var/lib/svc-agent");
    expect(mountOf(state.name).readOnly).not.toBe(true);
  });

  test("locked down: no escalation, read-only root, only DAC_READ_SEARCH, RuntimeDefault seccomp, no token", () => {
    expect(container.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"], add: ["DAC_READ_SEARCH"] },
    });
    expect(container.securityContext.privileged).not.toBe(true);
    expect(pod.securityContext.seccompProfile).toEqual({ type: "RuntimeDefault" });
    expect(pod.hostNetwork).not.toBe(true);
    expect(pod.hostIPC).not.toBe(true);
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(one(objects, "ServiceAccount", pod.serviceAccountName).automountServiceAccountToken).toBe(false);
  });

  test("resources: requests and limits, memory capped at 128Mi", () => {
    expect(container.resources.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
    expect(container.resources.limits).toEqual({ cpu: "100m", memory: "128Mi" });
  });

  test("the node name reaches the agent (its stable identity in a cluster)", () => {
    expect(container.env).toContainEqual({ name: "NODE_NAME", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } });
  });

  test("the example Secret is a valid agent config once its token is filled in, and only browses mounted roots", () => {
    const secret = one(parseFile(join(K8S, "agent", "config-secret.example.yaml")), "Secret", "svc-agent-config");
    const text: string = secret.stringData["config.yaml"];
    expect(() => parseAgentConfig(text)).toThrow(AgentConfigError); // the placeholder token is refused
    const { config } = parseAgentConfig(text.replace(/token: \S+/, `token: svcen_${"a".repeat(40)}`));
    expect(config.server.url).toBe("wss://svc.example.com/v1/agent");
    const mounted = container.volumeMounts.map((m: Obj) => m.mountPath);
    for (const root of config.browse.allowedRoots) expect(mounted).toContain(root);
  });
});

describe("server Deployment", () => {
  const objects = resources(join(K8S, "server"));
  const deployment = one(objects, "Deployment", "svc-server");
  const pod = deployment.spec.template.spec;
  const [container] = pod.containers;
  const labels = deployment.spec.template.metadata.labels;
  const env = (name: string) => container.env.find((e: Obj) => e.name === name);
  const secret = one(parseFile(join(K8S, "server", "secret.example.yaml")), "Secret");
  const configMap = one(objects, "ConfigMap");

  /** The variables the server process would see, with the example Secret and the ConfigMap resolved. */
  function resolvedEnv(omitSecretKeys: string[] = []): Record<string, string> {
    const out: Record<string, string> = {};
    for (const { name, value, valueFrom } of container.env) {
      const ref = valueFrom?.secretKeyRef ?? valueFrom?.configMapKeyRef;
      const source = valueFrom?.secretKeyRef ? secret : configMap;
      if (ref) expect(source.metadata.name, name).toBe(ref.name);
      const resolved = ref ? (source.stringData ?? source.data)[ref.key] : value;
      if (ref?.optional && (resolved === undefined || omitSecretKeys.includes(ref.key))) continue;
      expect(resolved, name).toBeString();
      out[name] = resolved;
    }
    return out;
  }

  test("two replicas on the external store, the URI from a Secret, listening on 0.0.0.0:8080", () => {
    expect(deployment.spec.replicas).toBe(2);
    expect(deployment.spec.template.metadata.labels).toMatchObject(deployment.spec.selector.matchLabels);
    expect(env("SVC_STORAGE_BACKEND")).toEqual({ name: "SVC_STORAGE_BACKEND", value: "external" });
    expect(env("SVC_DATABASE_URI").valueFrom.secretKeyRef).toMatchObject({ name: "svc-server-secrets", key: "database-uri" });
    expect(env("SVC_DATABASE_URI").value).toBeUndefined();
    expect(env("SVC_LISTEN").value).toBe("0.0.0.0:8080");
    expect(container.ports).toContainEqual({ name: "http", containerPort: 8080, protocol: "TCP" });
  });

  test("every variable is one the server reads, and the server's loader accepts them", () => {
    const known = new Set((Object.entries(KEYS) as [string, KeySpec][]).flatMap(([key, spec]) => [envName(key), ...(spec.aliases ?? [])]));
    for (const { name } of container.env) expect(known.has(name), name).toBe(true);
    const key = randomBytes(32).toString("base64");
    expect(() => loadConfig({ path: null, env: { ...resolvedEnv(), SVC_SECRETS_KEY: key } })).toThrow(ConfigError); // the placeholder admin token is refused
    expect(() => loadConfig({ path: null, env: resolvedEnv(["admin-token"]) })).toThrow(ConfigError); // so is the placeholder secrets key
    const config = loadConfig({ path: null, env: { ...resolvedEnv(["admin-token"]), SVC_SECRETS_KEY: key } });
    expect(config.storage.backend).toBe("external");
    expect(config.database.uri).toStartWith("mongodb://");
    expect(config.listen).toEqual({ host: "0.0.0.0", port: 8080 });
    expect(config.externalUrl).toBe(configMap.data.externalUrl);
  });

  test("probes use the server's unauthenticated /healthz and /readyz", () => {
    const served = read("server/http/server.ts");
    for (const path of ["/healthz", "/readyz"]) expect(served).toContain(`url.pathname === "${path}"`);
    expect(container.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "http" });
    expect(container.readinessProbe.httpGet).toEqual({ path: "/readyz", port: "http" });
    expect(container.startupProbe?.httpGet.path ?? "/healthz").toBe("/healthz");
  });

  test("non-root, no capabilities, read-only root with a writable directory for the state beside storage.boltPath", () => {
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
    expect(pod.securityContext.seccompProfile).toEqual({ type: "RuntimeDefault" });
    expect(container.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } });
    expect(container.securityContext.capabilities.add).toBeUndefined();
    const dataDir = dirname(KEYS["storage.boltPath"].default);
    const mount = container.volumeMounts.find((m: Obj) => m.mountPath === dataDir);
    expect(mount?.readOnly).not.toBe(true);
    expect(pod.volumes.find((v: Obj) => v.name === mount.name).emptyDir).toBeDefined();
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(one(objects, "ServiceAccount", pod.serviceAccountName)).toBeDefined();
    expect(container.resources.requests).toBeDefined();
    expect(container.resources.limits.memory).toBeDefined();
  });

  test("a Service selects its pods on the http port; the PDB keeps one; replicas spread over nodes", () => {
    const service = one(objects, "Service", "svc-server");
    expect(labels).toMatchObject(service.spec.selector);
    expect(service.spec.ports.map((p: Obj) => p.targetPort)).toContain("http");
    const pdb = one(objects, "PodDisruptionBudget");
    expect(pdb.spec.minAvailable).toBe(1);
    expect(labels).toMatchObject(pdb.spec.selector.matchLabels);
    const byHost = pod.topologySpreadConstraints.find((c: Obj) => c.topologyKey === "kubernetes.io/hostname");
    expect(byHost).toMatchObject({ maxSkew: 1, whenUnsatisfiable: "DoNotSchedule" });
    expect(labels).toMatchObject(byHost.labelSelector.matchLabels);
  });
});

describe("container images", () => {
  /** Instructions with continuation lines joined and comments dropped. */
  const instructions = (name: string) =>
    read(`packaging/container/${name}`)
      .replace(/\\\n/g, " ")
      .split("\n")
      .filter((line) => line.trim() !== "" && !line.trimStart().startsWith("#"));
  const pkg = JSON.parse(read("package.json"));

  for (const [name, binary] of [
    ["agent.Dockerfile", "svc-agent"],
    ["server.Dockerfile", "svc-server"],
  ] as const) {
    test(`${name}: builds from repository files that exist and installs /usr/local/bin/${binary}`, () => {
      const lines = instructions(name);
      expect(lines.filter((l) => l.startsWith("FROM ")).length).toBe(2);
      for (const line of lines.filter((l) => /^COPY (?!--from)/.test(l))) {
        for (const source of line.split(/\s+/).slice(1, -1)) expect(existsSync(join(REPO, source)), `${name}: ${line}`).toBe(true);
      }
      for (const path of lines
        .filter((l) => l.startsWith("RUN "))
        .join(" ")
        .match(/\b(?:scripts|server|agent)\/[\w./-]+/g) ?? []) {
        expect(existsSync(join(REPO, path)), `${name}: ${path}`).toBe(true);
      }
      expect(lines).toContain(`COPY --from=build /out/${binary} /usr/local/bin/${binary}`);
      expect(lines.join("\n")).toContain("ca-certificates");
      expect(lines).toContain(`ENTRYPOINT ["/usr/local/bin/${binary}"]`);
    });
  }

  test("the agent image is built by scripts/build-agent.sh and starts with --config /etc/svc-agent/config.yaml", () => {
    const lines = instructions("agent.Dockerfile");
    expect(lines.join("\n")).toContain("bash scripts/build-agent.sh --outfile /out/svc-agent");
    expect(read("scripts/build-agent.sh")).toContain("--outfile)");
    expect(lines).toContain('CMD ["--config", "/etc/svc-agent/config.yaml"]');
  });

  test("the server image compiles as `npm run build` does, runs as the Deployment's non-root user on 8080", () => {
    const lines = instructions("server.Dockerfile");
    const build = (pkg.scripts.build as string).replace(/^bun /, "node_modules/.bin/bun ").replace("dist/svc-server", "/out/svc-server");
    expect(lines.join("\n")).toContain(build);
    const uid = resources(join(K8S, "server")).find((o) => o.kind === "Deployment").spec.template.spec.securityContext.runAsUser;
    expect(lines).toContain(`USER ${uid}:${uid}`);
    expect(lines).toContain("EXPOSE 8080");
    expect(lines).toContain("ENV SVC_LISTEN=0.0.0.0:8080");
  });

  test(".dockerignore keeps installed and built files out of the build context", () => {
    const ignored = read(".dockerignore").split("\n");
    for (const entry of ["**/node_modules", "dist", ".data", ".git"]) expect(ignored).toContain(entry);
  });
});
