/**
 * Bearer tokens: a kind prefix (so secret scanners can spot a leak), 256 bits
 * of randomness in base62, stored only as a SHA-256 digest and compared in
 * constant time. The plain token exists once, in the response that mints it.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";

export const TOKEN_PREFIXES = {
  serviceAccount: "svcsa_",
  enrollment: "svcen_",
  collector: "svcct_",
  /** A collector's own-metrics credential: it pushes to /v1/metrics for its collector and does nothing else. */
  collectorMetrics: "svccm_",
  /** A host agent's own credential, minted at its first enrollment and bound to its id. */
  agent: "svcag_",
  /** A web UI session, carried only in the HttpOnly `svc_session` cookie. */
  session: "svcus_",
  /** A single-use invite or password-reset link for a user. */
  userLink: "svcul_",
} as const;

export type TokenKind = keyof typeof TOKEN_PREFIXES;

/**
 * The collection of token records, keyed by digest: every kind of Bearer
 * token is kept there, and live sessions stand on its documents (live.ts).
 */
export const TOKENS = "tokens";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

function base62(bytes: Uint8Array): string {
  let n = BigInt("0x" + Buffer.from(bytes).toString("hex"));
  let out = "";
  while (n > 0n) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(43, "0");
}

export function mintToken(kind: TokenKind): string {
  return TOKEN_PREFIXES[kind] + base62(randomBytes(32));
}

export function hashToken(token: string): string {
  // Every authenticated request hashes its token (collector polls by the ten thousand per second):
  // Bun's one-shot SHA-256 gives node:crypto's digest at a third of the cost.
  return Bun.SHA256.hash(token, "hex");
}

/** Constant-time comparison of two hex digests of equal length. */
export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, "hex");
  const right = Buffer.from(b, "hex");
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Constant-time comparison of two strings (e.g. a CSRF header against the expected value). */
export function stringsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, "utf8");
  const right = Buffer.from(b, "utf8");
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Any svc token: a kind prefix and its 43 base62 characters. */
const ANY_TOKEN = new RegExp(`(${Object.values(TOKEN_PREFIXES).join("|")})[0-9A-Za-z]{43}`, "g");

/**
 * `text` with every svc token in it cut to its prefix and `[REDACTED]`: text a
 * collector sends back (the OpAMP supervisor's own merged config carries the
 * token it connects with) is stored and shown, and a token must never be.
 */
export function redactTokens(text: string): string {
  return text.replace(ANY_TOKEN, "$1[REDACTED]");
}

const PREFIX_KINDS = Object.entries(TOKEN_PREFIXES) as [TokenKind, string][];

/** Asked on every channel request (the edge, then the channel): the prefixes are listed once. */
export function tokenKind(token: string): TokenKind | null {
  for (const [kind, prefix] of PREFIX_KINDS) {
    if (token.startsWith(prefix)) return kind;
  }
  return null;
}

/** The Bearer credential of an Authorization header, or null for anything else (Basic included). */
export function bearerToken(header: string | null): string | null {
  if (header === null) return null;
  const match = /^Bearer[ ]+([^\s]+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}
