/**
 * Host-path policy for sources: which files a source may make a collector
 * read on its host. A collector runs with more rights than whoever edits its
 * config, and a filelog source shipped to any destination is a file copy, so
 * a source path must lie under an allowed prefix (`sources.hostPaths.
 * allowedPrefixes`, by default the agent's default browse roots) and match no
 * deny pattern (the agent's built-in ones plus `sources.hostPaths.
 * denyPatterns`, matched as shared/deny.ts says): the same line log browsing
 * draws. Holding `sources:hostpaths` (admin only) lifts both.
 *
 * Both runtimes expand globs with doublestar v4 (filelog: pkg/stanza/
 * fileconsumer/matcher/internal/finder/finder.go, `doublestar.FilepathGlob`;
 * Alloy local.file_match: internal/component/local/file_match/watch.go, the
 * same), whose meta characters are `*?[{` with `\` escaping; `{a,b}`
 * alternatives may hold `/`. So a glob's alternatives are expanded first (at
 * most MAX_ALTERNATIVES), and each is judged by its literal directory part, up
 * to the first component holding a glob character: `/var/log/**` is under
 * /var/log, `/var/lo*` is judged as `/var`. Every component, globbed or not,
 * is matched against the deny patterns, so `/var/log/*.key` and
 * `/var/log/{app.log,server.key}` are refused; a wildcard that may also match
 * a denied name (`/var/log/*`) is not, as the prefix is what bounds it.
 * Excludes only narrow what is read and are not checked. The OTLP
 * destinations' TLS files (ca_file, cert_file, key_file) are held to the same
 * policy, on destinations and their activations' overrides.
 */
import { posix } from "node:path";
import { ALWAYS_DENIED, DenyList } from "../../shared/deny.ts";
import type { Scope } from "../auth/scopes.ts";
import { TLS_FILE_KEYS } from "./destinations/otlp-client.ts";
import { ValidationError, type ErrorDetail } from "../errors.ts";

export const HOST_PATHS_SCOPE: Scope = "sources:hostpaths";

export interface HostPathPolicy {
  /** Absolute directory prefixes; `*` or `/` allows the whole filesystem. */
  allowedPrefixes: readonly string[];
  /** Added to the agent's built-in deny patterns. */
  denyPatterns: readonly string[];
}

/** doublestar's meta characters and its escape, plus the closing brackets (a superset: judged conservatively). */
const GLOB_CHARS = /[*?[\]{}\\]/;
/** Alternatives one glob may expand to before it is refused as too broad to judge. */
export const MAX_ALTERNATIVES = 256;

/**
 * The host paths a source or destination of `type` reads, each with the key
 * that holds it. The OTLP destinations' TLS files (otlp-client.ts) are read
 * by the collector as credentials rather than shipped, but a path is still a
 * file on someone else's host, so the same policy bounds it; the source type
 * `otlp` has no `tls`, so sharing the type name is harmless.
 */
function hostPathsOf(type: string, config: Record<string, unknown>): { key: string; value: string }[] {
  if (type === "filelog" && Array.isArray(config.include)) {
    return config.include.flatMap((value, i) => (typeof value === "string" ? [{ key: `config.include[${i}]`, value }] : []));
  }
  if (type === "journald" && typeof config.directory === "string") return [{ key: "config.directory", value: config.directory }];
  // TLS files a collector reads: an OTLP exporter's CA, certificate and key, a Kafka source's CA.
  if ((type === "otlp" || type === "otlphttp" || type === "kafka") && typeof config.tls === "object" && config.tls !== null) {
    const tls = config.tls as Record<string, unknown>;
    return TLS_FILE_KEYS.flatMap((key) => (typeof tls[key] === "string" ? [{ key: `config.tls.${key}`, value: tls[key] }] : []));
  }
  return [];
}

export class HostPaths {
  readonly #prefixes: string[];
  readonly #wholeFilesystem: boolean;
  readonly #deny: DenyList;

  constructor(readonly policy: HostPathPolicy) {
    this.#prefixes = policy.allowedPrefixes.filter((p) => p !== "*").map((p) => trimSlash(posix.normalize(p)));
    this.#wholeFilesystem = policy.allowedPrefixes.some((p) => p === "*") || this.#prefixes.includes("/");
    this.#deny = new DenyList([...ALWAYS_DENIED, ...policy.denyPatterns]);
  }

  /**
   * Why a source's host paths break the policy, one detail per path, keyed as
   * the API names them (`config.include[0]`; `root` replaces `config`). Paths
   * in `kept` (the configs as stored) pass: whoever may widen approved them,
   * and saving them again widens nothing.
   */
  problems(type: string, config: Record<string, unknown>, kept: readonly Record<string, unknown>[] = [], root = "config"): ErrorDetail[] {
    const stored = new Set(kept.flatMap((k) => hostPathsOf(type, k).map((p) => p.value)));
    const problems: ErrorDetail[] = [];
    for (const { key, value } of hostPathsOf(type, config)) {
      if (stored.has(value)) continue;
      const message = this.#problem(value);
      if (message !== undefined) problems.push({ path: root + key.slice("config".length), message });
    }
    return problems;
  }

  /** Throws a ValidationError naming each path the policy refuses, unless `who` holds the scope that lifts it. */
  enforce(
    who: { scopes?: ReadonlySet<string> },
    type: string,
    config: Record<string, unknown>,
    kept: readonly Record<string, unknown>[],
    root = "config",
  ): void {
    if (who.scopes?.has(HOST_PATHS_SCOPE)) return;
    const problems = this.problems(type, config, kept, root);
    if (problems.length > 0) {
      throw new ValidationError(
        `This configuration would make collectors read host paths outside what sources and destinations may read (sources.hostPaths); only a caller with the ${HOST_PATHS_SCOPE} scope may widen that.`,
        problems,
      );
    }
  }

  #problem(glob: string): string | undefined {
    const alternatives = expandBraces(glob);
    if (alternatives === null) return `has more than ${MAX_ALTERNATIVES} {a,b} alternatives; split it into several globs`;
    for (const path of alternatives) {
      const problem = this.#pathProblem(path);
      if (problem !== undefined) return path === glob ? problem : `${problem} (the alternative ${path} of ${glob})`;
    }
    return undefined;
  }

  #pathProblem(path: string): string | undefined {
    const widen = `; reading it needs the ${HOST_PATHS_SCOPE} scope (admin)`;
    if (!path.startsWith("/")) return `must be an absolute path under an allowed prefix (${this.#shown()})${widen}`;
    if (path.split("/").includes("..")) return `must not contain '..' (collectors resolve it, this check would not)`;
    const literal = literalDirectory(path);
    if (!this.#wholeFilesystem && !this.#prefixes.some((prefix) => isInside(literal, prefix))) {
      return `${path} is outside the host paths sources may read (sources.hostPaths.allowedPrefixes: ${this.#shown()})${widen}`;
    }
    const pattern = this.#deny.deniedBy(path);
    if (pattern !== undefined) return `${path} matches the deny pattern ${pattern} (secrets and pseudo-filesystems are never read by sources)${widen}`;
    return undefined;
  }

  #shown(): string {
    return this.policy.allowedPrefixes.join(", ") || "none";
  }
}

/**
 * Every alternative of a glob's `{a,b}` groups (nested too), or null past
 * MAX_ALTERNATIVES. An unmatched `{` stays as it is: doublestar refuses such
 * a glob, and the prefix check already treats it as a glob character.
 */
function expandBraces(glob: string): string[] | null {
  const done: string[] = [];
  const queue = [glob];
  while (queue.length > 0) {
    const pattern = queue.pop()!;
    const group = firstGroup(pattern);
    if (group === null) {
      done.push(pattern);
      if (done.length > MAX_ALTERNATIVES) return null;
      continue;
    }
    for (const alternative of group.alternatives) queue.push(pattern.slice(0, group.start) + alternative + pattern.slice(group.end + 1));
    if (queue.length + done.length > MAX_ALTERNATIVES) return null;
  }
  return done;
}

/** The first unescaped `{…}` group with its top-level alternatives, or null. */
function firstGroup(pattern: string): { start: number; end: number; alternatives: string[] } | null {
  let start = -1;
  let depth = 0;
  let from = 0;
  const alternatives: string[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") {
      i++;
    } else if (c === "{") {
      if (depth++ === 0) {
        start = i;
        from = i + 1;
      }
    } else if (c === "," && depth === 1) {
      alternatives.push(pattern.slice(from, i));
      from = i + 1;
    } else if (c === "}" && depth > 0 && --depth === 0) {
      alternatives.push(pattern.slice(from, i));
      return { start, end: i, alternatives };
    }
  }
  return null;
}

/** The path up to the first component holding a glob character (the whole path when there is none). */
function literalDirectory(path: string): string {
  const literal: string[] = [];
  for (const name of path.split("/")) {
    if (GLOB_CHARS.test(name)) break;
    literal.push(name);
  }
  return trimSlash(posix.normalize(literal.join("/") || "/"));
}

function trimSlash(path: string): string {
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}

/** On component boundaries: `/var/logs` is not inside `/var/log`. */
function isInside(path: string, prefix: string): boolean {
  return prefix === "/" || path === prefix || path.startsWith(`${prefix}/`);
}
