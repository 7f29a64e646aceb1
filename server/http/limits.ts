/**
 * What the edge refuses before any handler runs: more open requests and
 * WebSockets than `http.maxConnections` (503), and callers past their rate
 * (429 `rate_limited`, both with Retry-After). Rates are token buckets per
 * credential on the REST API, per address for failed authentication, and per
 * token and per address for enrollment tokens on any channel, and per
 * address for password attempts (each costs an argon2 hash). Behind a
 * trusted proxy the address is the client's, from X-Forwarded-For, so one
 * caller's failures do not lock out everyone behind the proxy. A burst of
 * refusals leaves one audit entry per key and window, not one per request,
 * so a flood cannot flood the audit log too.
 */
import type { Server } from "bun";
import type { Logger } from "pino";
import { auditEntry, type Actor } from "../audit/audit.ts";
import type { Principal } from "../auth/service-accounts.ts";
import { hashToken } from "../auth/tokens.ts";
import type { ServerConfig } from "../config/load.ts";
import { RateLimitedError, UnavailableError } from "../errors.ts";
import type { Store } from "../store/store.ts";
import { RateLimiter } from "../lib/ratelimit.ts";

/** One audit entry per limited key within this window. */
export const AUDIT_WINDOW_MS = 60_000;

export interface LimitsDeps {
  config: Pick<ServerConfig, "http" | "rateLimit">;
  store: Store;
  logger: Logger;
}

export class EdgeLimits {
  private readonly api: RateLimiter;
  private readonly authFailures: RateLimiter;
  private readonly enrollmentTokens: RateLimiter;
  private readonly enrollmentAddresses: RateLimiter;
  private readonly passwordAddresses: RateLimiter;
  /** Key → performance.now() of its last audit entry. */
  private readonly audited = new Map<string, number>();
  private readonly trustedProxies: Set<string>;

  constructor(private readonly deps: LimitsDeps) {
    this.trustedProxies = new Set(deps.config.http.trustedProxies);
    const { rateLimit } = deps.config;
    this.api = new RateLimiter(rateLimit.api);
    this.authFailures = new RateLimiter(rateLimit.authFailures);
    this.enrollmentTokens = new RateLimiter(rateLimit.enrollment);
    this.enrollmentAddresses = new RateLimiter(rateLimit.enrollment);
    this.passwordAddresses = new RateLimiter(rateLimit.passwords);
  }

  /** 503 past `http.maxConnections` requests and WebSockets open at once (this request counted). */
  admit(server: Server<unknown>): void {
    if (server.pendingRequests + server.pendingWebSockets > this.deps.config.http.maxConnections) {
      throw new UnavailableError(
        "The server holds as many connections as it is configured for (http.maxConnections); retry later.",
        1 + Math.floor(Math.random() * 5),
        "overloaded",
      );
    }
  }

  /** 429 for an address whose failed authentications have used up its rate, before its credential is looked at. */
  checkAddress(req: Request, peer: string | null): void {
    const remoteAddr = this.clientAddress(req, peer);
    const wait = this.authFailures.check(addressKey(remoteAddr));
    if (wait > 0) this.refuse(`auth:${remoteAddr}`, anonymous(remoteAddr), "address", remoteAddr, wait, "Too many failed authentications from this address");
  }

  /** Counts one failed authentication against the address. */
  authFailed(req: Request, peer: string | null): void {
    this.authFailures.take(addressKey(this.clientAddress(req, peer)));
  }

  /** Takes one call from the credential's rate (a service account, or a UI user). */
  takeCall(principal: Principal): void {
    const key = `${principal.kind}:${principal.id}`;
    const wait = this.api.take(key);
    if (wait > 0) this.refuse(`api:${key}`, principal, "principal", principal.actor, wait, "Too many calls with this credential");
  }

  /** Takes one enrollment attempt from the token's rate and from the address's. */
  takeEnrollment(token: string, req: Request, peer: string | null): void {
    const remoteAddr = this.clientAddress(req, peer);
    const tokenId = hashToken(token).slice(0, 16);
    const byToken = this.enrollmentTokens.take(tokenId);
    if (byToken > 0)
      this.refuse(`enroll-token:${tokenId}`, anonymous(remoteAddr), "enrollment_token", tokenId, byToken, "Too many enrollment attempts with this token");
    const byAddress = this.enrollmentAddresses.take(addressKey(remoteAddr));
    if (byAddress > 0)
      this.refuse(`enroll-addr:${remoteAddr}`, anonymous(remoteAddr), "address", remoteAddr, byAddress, "Too many enrollment attempts from this address");
  }

  /** Takes one password attempt (log in, redeem a link) from the address's rate, before the body is read or anything hashed. */
  takePasswordAttempt(req: Request, peer: string | null): void {
    const remoteAddr = this.clientAddress(req, peer);
    const wait = this.passwordAddresses.take(addressKey(remoteAddr));
    if (wait > 0) this.refuse(`password:${remoteAddr}`, anonymous(remoteAddr), "address", remoteAddr, wait, "Too many password attempts from this address");
  }

  /** The peer, or behind a trusted proxy the nearest address it was forwarded for that is not itself a trusted proxy. */
  private clientAddress(req: Request, peer: string | null): string | null {
    if (peer === null || !this.trustedProxies.has(peer)) return peer;
    const hops = (req.headers.get("x-forwarded-for") ?? "")
      .split(",")
      .map((hop) => hop.trim())
      .filter((hop) => hop !== "");
    for (let i = hops.length - 1; i >= 0; i--) if (!this.trustedProxies.has(hops[i]!)) return hops[i]!;
    return peer;
  }

  private refuse(key: string, who: Actor, resource: string, resourceId: string | null, wait: number, what: string): never {
    const now = performance.now();
    const last = this.audited.get(key);
    if (last === undefined || now - last >= AUDIT_WINDOW_MS) {
      if (this.audited.size >= 10_000) this.forgetOld(now);
      this.audited.set(key, now);
      const entry = auditEntry(
        who,
        "ratelimit.refused",
        resource,
        resourceId,
        { limit: key.slice(0, key.indexOf(":")), windowSeconds: AUDIT_WINDOW_MS / 1000 },
        "denied",
      );
      this.deps.store.write([], [entry]).catch((error) => this.deps.logger.warn({ err: error }, "auditing a rate-limit refusal failed"));
    }
    throw new RateLimitedError(`${what}; retry after ${wait} s.`, wait);
  }

  private forgetOld(now: number): void {
    for (const [key, at] of this.audited) if (now - at >= AUDIT_WINDOW_MS) this.audited.delete(key);
  }
}

function addressKey(remoteAddr: string | null): string {
  return remoteAddr ?? "unknown";
}

function anonymous(remoteAddr: string | null): Actor {
  return { actor: "anonymous", remoteAddr };
}
