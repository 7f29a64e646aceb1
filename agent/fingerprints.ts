/**
 * Service fingerprints: how the agent recognises a service on its host (a
 * process, a listening TCP port, a systemd unit or a file that exists) and
 * which log files and pipeline template it suggests for it. The built-ins are
 * `fingerprints/<name>.yaml`, embedded in the compiled binary by text imports;
 * `customFingerprints[]` in the agent config adds to them or replaces one by
 * name. Templates are checked for shape only: the server validates them
 * against its catalog when a source is made from one, which keeps the catalog
 * out of the agent binary.
 */
import { lstat, access } from "node:fs/promises";
import { join } from "node:path";
import apache from "../fingerprints/apache.yaml" with { type: "text" };
import docker from "../fingerprints/docker.yaml" with { type: "text" };
import haproxy from "../fingerprints/haproxy.yaml" with { type: "text" };
import journald from "../fingerprints/journald.yaml" with { type: "text" };
import kubernetes from "../fingerprints/kubernetes.yaml" with { type: "text" };
import mysql from "../fingerprints/mysql.yaml" with { type: "text" };
import nginx from "../fingerprints/nginx.yaml" with { type: "text" };
import postgresql from "../fingerprints/postgresql.yaml" with { type: "text" };
import redis from "../fingerprints/redis.yaml" with { type: "text" };
import syslog from "../fingerprints/syslog.yaml" with { type: "text" };
import type { ConfigProblem, Fingerprint, FingerprintMatch, ServiceFacts } from "./types.ts";
import type { DetectedService, TemplateStep } from "../shared/agent-protocol.ts";
import { child, isMapping, isUnset, KeyReader, parseYaml, type Check } from "./yaml-keys.ts";

/** File text by fingerprint name; each file must hold the fingerprint of its own name. */
const BUILTIN_FILES: Record<string, string> = {
  apache,
  docker,
  haproxy,
  journald,
  kubernetes,
  mysql,
  nginx,
  postgresql,
  redis,
  syslog,
};

export const DEFAULT_MAX_LOG_FILES = 50;

const FINGERPRINT_KEYS = ["name", "title", "match", "logPaths", "pipeline"] as const;
const MATCH_KEYS = ["processNames", "ports", "units", "files"] as const;
const GLOB_CHARS = /[*?[\]{}]/;
/** Kernel pseudo-filesystems: reading them can block or never end. */
const PSEUDO_FS = /^\/(proc|sys)(\/|$)/;
const UNIT_NAME = /^[A-Za-z0-9:_.@\\-]+\.(service|socket|device|mount|automount|swap|target|path|timer|slice|scope)$/;

const checkName: Check<string> = (v) =>
  /^[a-z0-9][a-z0-9-]{0,62}$/.test(v) ? undefined : "must be a lower-case id: letters, digits and '-', at most 63 characters";
const checkTitle: Check<string> = (v) => (v.length <= 100 ? undefined : "must be at most 100 characters");
const checkProcessName: Check<string> = (v) => (v.includes("/") ? "must be an executable's base name, without a directory" : undefined);
const checkUnit: Check<string> = (v) => (UNIT_NAME.test(v) ? undefined : "must be a systemd unit name with its suffix, e.g. nginx.service");
const checkStepType: Check<string> = (v) => (/^[a-z][a-z0-9_]*$/.test(v) ? undefined : "must be a catalog type id such as filelog");

function checkFile(v: string): string | undefined {
  if (!v.startsWith("/")) return "must be an absolute path";
  if (GLOB_CHARS.test(v)) return "must be an exact path, not a glob";
  return PSEUDO_FS.test(v) ? "must not be under /proc or /sys" : undefined;
}

/** A log glob must start at a fixed directory, so a scan never wanders through /proc or /sys. */
function checkLogPath(v: string): string | undefined {
  if (!v.startsWith("/")) return "must be an absolute glob";
  const { base } = splitGlob(v);
  if (base === "/") return "must start with a fixed directory, e.g. /var/log/app/*.log";
  return PSEUDO_FS.test(base) ? "must not be under /proc or /sys" : undefined;
}

/**
 * A fingerprint from parsed YAML, with every problem keyed from `keyPrefix`
 * (e.g. `customFingerprints[2]`, giving `customFingerprints[2].match.ports[0]`).
 */
export function validateFingerprint(raw: unknown, keyPrefix: string): { fingerprint?: Fingerprint; problems: ConfigProblem[] } {
  const r = new KeyReader();
  if (!isMapping(raw)) {
    r.problem(keyPrefix === "" ? "(root)" : keyPrefix, `must be a mapping of ${FINGERPRINT_KEYS.join(", ")}`);
    return { problems: r.problems };
  }
  const key = (name: string) => child(keyPrefix, name);
  const m = r.mapping(raw, keyPrefix, FINGERPRINT_KEYS);
  const name = r.requiredString(m.name, key("name"), "a lower-case id such as nginx", checkName);
  const title = r.requiredString(m.title, key("title"), "what the UI shows, such as NGINX", checkTitle);
  const match = readMatch(r, m.match, key("match"));
  const logPaths = r.stringList(m.logPaths, key("logPaths"), checkLogPath) ?? [];
  const pipeline = readPipeline(r, m.pipeline, key("pipeline"));
  if (r.problems.length > 0 || name === null || title === null || pipeline === null) return { problems: r.problems };
  return { fingerprint: { name, title, match, logPaths, pipeline }, problems: [] };
}

function readMatch(r: KeyReader, value: unknown, key: string): FingerprintMatch {
  const m = r.mapping(value, key, MATCH_KEYS);
  const given = MATCH_KEYS.some((name) => Array.isArray(m[name]) && (m[name] as unknown[]).length > 0);
  if (!given) r.problem(key, `needs at least one of ${MATCH_KEYS.join(", ")}`);
  return {
    processNames: r.stringList(m.processNames, child(key, "processNames"), checkProcessName) ?? [],
    ports: r.integerList(m.ports, child(key, "ports"), 1, 65535) ?? [],
    units: r.stringList(m.units, child(key, "units"), checkUnit) ?? [],
    files: r.stringList(m.files, child(key, "files"), checkFile) ?? [],
  };
}

function readPipeline(r: KeyReader, value: unknown, key: string): Fingerprint["pipeline"] | null {
  if (isUnset(value)) {
    r.problem(key, "is required: the source (and processors) to suggest for the service");
    return null;
  }
  const m = r.mapping(value, key, ["source", "processors"]);
  const source = readStep(r, m.source, child(key, "source"));
  const items = r.list(m.processors, child(key, "processors")) ?? [];
  const processors = items.flatMap((item, i) => readStep(r, item, `${key}.processors[${i}]`) ?? []);
  return source === null || processors.length < items.length ? null : { source, processors };
}

/** `{type, config}`: a catalog type id and its config, which the server's catalog validates. */
function readStep(r: KeyReader, value: unknown, key: string): TemplateStep | null {
  if (isUnset(value)) {
    r.problem(key, "is required: {type, config} of a catalog type");
    return null;
  }
  const m = r.mapping(value, key, ["type", "config"]);
  const type = r.requiredString(m.type, child(key, "type"), "a catalog type id such as filelog", checkStepType);
  const config = r.mapping(m.config, child(key, "config"));
  return type === null ? null : { type, config };
}

/** The built-in fingerprints, parsed from the embedded files; a bad file is a build defect and throws. */
export function builtinFingerprints(): Fingerprint[] {
  return Object.entries(BUILTIN_FILES).map(([file, text]) => {
    const problems: ConfigProblem[] = [];
    const raw = parseYaml(text, problems);
    const result = problems.length > 0 ? { problems } : validateFingerprint(raw, "");
    if (result.fingerprint === undefined || result.fingerprint.name !== file) {
      const details = result.problems.map((p) => `${p.key}: ${p.message}`).join("; ") || `its name is not ${file}`;
      throw new Error(`built-in fingerprint ${file}.yaml is not valid: ${details}`);
    }
    return result.fingerprint;
  });
}

/** Built-ins in their order, each replaced by the custom one of the same name; other custom ones after them. */
export function mergeFingerprints(builtin: readonly Fingerprint[], custom: readonly Fingerprint[]): Fingerprint[] {
  const byName = new Map(custom.map((f) => [f.name, f]));
  const merged = builtin.map((f) => byName.get(f.name) ?? f);
  const builtinNames = new Set(builtin.map((f) => f.name));
  return [...merged, ...custom.filter((f) => !builtinNames.has(f.name))];
}

export interface MatchOptions {
  /** Log files reported per service; default 50. */
  maxLogFiles?: number;
  /** Prefixed to every path looked at (files, logPaths), e.g. a test's fake filesystem root; reported paths stay unprefixed. */
  root?: string;
}

/** The facts as lookups built once, so each fingerprint costs a few map reads. */
interface FactIndex {
  pidsByProcess: Map<string, number[]>;
  pidsByPort: Map<number, number[]>;
  units: Set<string>;
}

/** The services whose fingerprints hit, in fingerprint order, with their evidence and current log files. */
export async function matchFingerprints(fingerprints: readonly Fingerprint[], facts: ServiceFacts, options: MatchOptions = {}): Promise<DetectedService[]> {
  const index = indexFacts(facts);
  const root = options.root ?? "";
  const limit = options.maxLogFiles ?? DEFAULT_MAX_LOG_FILES;
  const services = await Promise.all(fingerprints.map((f) => matchOne(f, index, root, limit)));
  return services.filter((s): s is DetectedService => s !== null);
}

function indexFacts(facts: ServiceFacts): FactIndex {
  const pidsByProcess = new Map<string, number[]>();
  for (const p of facts.processes) {
    // The name may be a truncated comm and the command a full path; either one's base name counts.
    for (const name of new Set([baseName(p.name), baseName(p.command.split(/\s/, 1)[0] ?? "")])) {
      if (name !== "") pushTo(pidsByProcess, name, p.pid);
    }
  }
  const pidsByPort = new Map<number, number[]>();
  for (const l of facts.listening) {
    if (l.protocol !== "tcp") continue;
    const pids = pidsByPort.get(l.port) ?? [];
    if (l.pid !== null) pids.push(l.pid);
    pidsByPort.set(l.port, pids);
  }
  return { pidsByProcess, pidsByPort, units: new Set(facts.units) };
}

async function matchOne(f: Fingerprint, index: FactIndex, root: string, limit: number): Promise<DetectedService | null> {
  const evidence: string[] = [];
  const pids = new Set<number>();
  const ports = new Set<number>();
  for (const name of f.match.processNames) {
    const hit = index.pidsByProcess.get(name);
    if (hit === undefined) continue;
    evidence.push(`process:${name}`);
    hit.forEach((pid) => pids.add(pid));
  }
  for (const port of f.match.ports) {
    const hit = index.pidsByPort.get(port);
    if (hit === undefined) continue;
    evidence.push(`port:${port}`);
    ports.add(port);
    hit.forEach((pid) => pids.add(pid));
  }
  for (const unit of f.match.units) {
    if (index.units.has(unit)) evidence.push(`unit:${unit}`);
  }
  const present = await Promise.all(f.match.files.map((file) => exists(onRoot(root, file))));
  f.match.files.forEach((file, i) => present[i] && evidence.push(`file:${file}`));
  if (evidence.length === 0) return null;
  return {
    fingerprint: f.name,
    title: f.title,
    evidence,
    pids: [...pids].sort((a, b) => a - b),
    ports: [...ports].sort((a, b) => a - b),
    logFiles: await findLogFiles(f.logPaths, root, limit),
    pipeline: f.pipeline,
  };
}

/**
 * Regular files matching the globs, at most `limit`, sorted. Symbolic links
 * are neither followed nor reported (a container's access.log linked to
 * /dev/stdout is no file to tail), and validated globs start below a fixed
 * directory outside /proc and /sys, so a scan stays on real files.
 */
async function findLogFiles(globs: readonly string[], root: string, limit: number): Promise<string[]> {
  const found = new Set<string>();
  for (const glob of globs) {
    if (found.size >= limit) break;
    const { base, pattern } = splitGlob(glob);
    if (pattern === "") {
      if (await isRegularFile(onRoot(root, base))) found.add(base);
      continue;
    }
    await scan(base, pattern, root, limit, found);
  }
  return [...found].sort();
}

async function scan(base: string, pattern: string, root: string, limit: number, found: Set<string>): Promise<void> {
  const files = new Bun.Glob(pattern).scan({ cwd: onRoot(root, base), onlyFiles: true, followSymlinks: false });
  try {
    for await (const relative of files) {
      found.add(`${base}/${relative}`);
      if (found.size >= limit) return;
    }
  } catch (error) {
    // A missing or unreadable directory has no log files for us; anything else is a bug.
    if (!isFsError(error)) throw error;
  }
}

/** `/var/log/nginx/*.log` → base `/var/log/nginx`, pattern `*.log`; a literal path has an empty pattern. */
function splitGlob(glob: string): { base: string; pattern: string } {
  const parts = glob.split("/");
  const first = parts.findIndex((part) => GLOB_CHARS.test(part));
  if (first === -1) return { base: glob, pattern: "" };
  return { base: parts.slice(0, first).join("/") || "/", pattern: parts.slice(first).join("/") };
}

function onRoot(root: string, path: string): string {
  return root === "" ? path : join(root, path);
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

async function isRegularFile(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isFile();
  } catch {
    return false;
  }
}

function isFsError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^E[A-Z]+$/.test(code);
}
