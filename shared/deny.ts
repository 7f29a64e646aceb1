/**
 * Deny patterns (spec "Agent log browsing"): Bun.Glob globs matched
 * case-insensitively (`SERVER.KEY` is a key too) against every component of a
 * path and against the path and each of its ancestors: `*.key` or `.ssh` hit a
 * component anywhere; `/proc/*` hits `/proc/1` and so everything beneath it;
 * `/etc/shadow` hits that path and anything beneath it. The agent's browser
 * applies them to what it reads; the server applies the same list to the paths
 * a source makes a collector read (server/catalog/hostpaths.ts).
 */

/** Browsable by default (spec "Agent log browsing"); also where sources may read by default (server/catalog/hostpaths.ts). */
export const DEFAULT_ALLOWED_ROOTS: readonly string[] = ["/var/log", "/var/lib/docker/containers", "/opt"];

/**
 * Never browsable; operator patterns are added to these. Private keys and key
 * stores by their usual names (SSH keys of every type, PKCS#12, Java key
 * stores, KeePass databases) and dotenv files, which hold secrets by convention.
 */
export const ALWAYS_DENIED: readonly string[] = [
  "*.key",
  "*.pem",
  "*.p12",
  "*.pfx",
  "*.jks",
  "*.kdbx",
  "id_rsa*",
  "id_dsa*",
  "id_ecdsa*",
  "id_ed25519*",
  ".env",
  ".env.*",
  "*shadow*",
  ".ssh",
  "/proc/*",
  "/sys/*",
  "/etc/shadow",
];

export class DenyList {
  readonly #deny: { pattern: string; glob: Bun.Glob }[];

  constructor(patterns: readonly string[]) {
    this.#deny = patterns.map((pattern) => ({ pattern, glob: new Bun.Glob(pattern.toLowerCase()) }));
  }

  /** The first pattern hitting any component of the absolute `path` or any of its ancestors (itself included). */
  deniedBy(path: string): string | undefined {
    let prefix = "";
    for (const name of path.split("/")) {
      if (name === "") continue;
      prefix += `/${name}`;
      const pattern = this.deniedAt(name, prefix);
      if (pattern !== undefined) return pattern;
    }
    return undefined;
  }

  /** The first pattern hitting the entry `name` whose full path is `path`. */
  deniedAt(name: string, path: string): string | undefined {
    const n = name.toLowerCase();
    const p = path.toLowerCase();
    return this.#deny.find(({ glob }) => glob.match(n) || glob.match(p))?.pattern;
  }
}
