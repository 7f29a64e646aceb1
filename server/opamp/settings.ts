/**
 * The connection settings offered to OpAMP agents: the OpAMP endpoint with
 * the collector's token and the heartbeat interval, and the own-metrics
 * destination with the same token.
 *
 * A collector token is offered only over a session authenticated by that very
 * token, so a rotated token never reaches a session opened with the old one
 * (that session is closed instead). A session opened with an enrollment token
 * (bound to its instance at the first message) is the enrollment's own
 * channel: it is offered the collector's current token, also after a
 * rotation, for as long as the enrollment token itself is valid, and is closed
 * when it is revoked or expires. (opamp-spec specification.md, "Revoking
 * Access", at f56c7ae: the Server revokes an Agent's access by marking its
 * credentials revoked and disconnecting the Client.)
 */
import { create } from "@bufbuild/protobuf";
import { createHash } from "node:crypto";
import type { Logger } from "pino";
import { SYSTEM_ACTOR } from "../audit/audit.ts";
import { ENDED } from "../auth/live.ts";
import type { CollectorTokens } from "../collectors/tokens.ts";
import type { ServerConfig } from "../config/load.ts";
import { ConflictError } from "../errors.ts";
import {
  AgentCapabilities,
  ConnectionSettingsOffersSchema,
  HeaderSchema,
  HeadersSchema,
  OpAMPConnectionSettingsSchema,
  TelemetryConnectionSettingsSchema,
  type ConnectionSettingsOffers,
} from "../gen/opamp/v1/opamp_pb.ts";
import type { Secrets } from "../secrets/secrets.ts";
import { Refused, stillValid, type Credential, type CredentialDeps } from "./credential.ts";
import { KeyedLock } from "../lib/keyed-lock.ts";
import type { Instance } from "./sessions.ts";
import { OPAMP_PATH } from "./wire.ts";

/** opamp-go's own heartbeat (WebSocket) and polling (HTTP) interval, used by an agent no one told otherwise. */
export const DEFAULT_HEARTBEAT_SECONDS = 30;

export const has = (caps: bigint, cap: AgentCapabilities) => (caps & BigInt(cap)) !== 0n;

export type SettingsDeps = CredentialDeps & {
  /** Read at each offer: the server's external URL and the operator's heartbeat interval. */
  config: Pick<ServerConfig, "externalUrl"> & { opamp: Pick<ServerConfig["opamp"], "heartbeatSeconds"> };
  collectorTokens: Pick<CollectorTokens, "verify" | "current" | "mint">;
  secrets: Pick<Secrets, "keyId">;
  logger: Logger;
};

export class ConnectionSettings {
  /** Collectors whose token this process is minting for an offer (the offer itself carries it; no push). */
  private readonly minting = new Set<string>();
  /** Collectors whose stored token this server's key could not open, already logged. */
  private readonly unopenable = new Set<string>();
  /** One mint per collector at a time. */
  private readonly lock = new KeyedLock();

  constructor(
    private readonly deps: SettingsDeps,
    /** Overrides `opamp.heartbeatSeconds`. */
    private readonly heartbeatSeconds?: number,
  ) {}

  /** The interval the operator set, offered to agents that report heartbeats; null: each keeps its own. */
  get offeredHeartbeat(): number | null {
    return this.heartbeatSeconds ?? this.deps.config.opamp.heartbeatSeconds;
  }

  /**
   * The collector's token was rotated (here or on another replica): its
   * stored token may open now. True when its sessions should be offered the
   * new one; false while this process mints it for an offer, which carries it.
   */
  rotated(collectorId: string): boolean {
    this.unopenable.delete(collectorId);
    return !this.minting.has(collectorId);
  }

  /**
   * Connection settings to offer when they changed since the last offer to
   * this instance. The token is the collector's stored one, so the offer is
   * the same after a restart and on every replica.
   *
   * opamp-go applies `opamp.heartbeat_interval_seconds` of every OpAMP offer
   * to an agent that reports heartbeats (its HTTP polling interval, its
   * WebSocket heartbeat; 0 switches the latter off), so an OpAMP offer is made
   * only when the operator set an interval or the agent takes connection
   * settings, and then carries the set interval or opamp-go's default.
   */
  async offer(instance: Instance, credential: Credential): Promise<ConnectionSettingsOffers | undefined> {
    const caps = instance.capabilities;
    const offers: { opamp?: ConnectionSettingsOffers["opamp"]; ownMetrics?: ConnectionSettingsOffers["ownMetrics"] } = {};
    const wantsMetrics = has(caps, AgentCapabilities.AgentCapabilities_ReportsOwnMetrics) && this.deps.config.externalUrl !== "";
    const wantsOpamp = has(caps, AgentCapabilities.AgentCapabilities_AcceptsOpAMPConnectionSettings);
    const heartbeat = has(caps, AgentCapabilities.AgentCapabilities_ReportsHeartbeat);
    const token = wantsMetrics || wantsOpamp ? await this.tokenToOffer(instance.collectorId, credential, wantsMetrics) : undefined;
    const auth = token !== undefined ? { headers: [{ key: "Authorization", value: `Bearer ${token}` }] } : undefined;
    const headers = auth && create(HeadersSchema, { headers: auth.headers.map((h) => create(HeaderSchema, h)) });
    const offered = this.offeredHeartbeat;
    if ((heartbeat && offered !== null) || (wantsOpamp && headers)) {
      offers.opamp = create(OpAMPConnectionSettingsSchema, {
        destinationEndpoint: wantsOpamp && headers ? opampEndpoint(this.deps.config.externalUrl) : "",
        // Unset by the operator: opamp-go's WebSocket default (0 would turn its heartbeats off), and 0 over
        // HTTP, which opamp-go refuses as a polling interval, so the agent keeps its own.
        heartbeatIntervalSeconds: !heartbeat ? 0n : BigInt(offered ?? (instance.session === null ? 0 : DEFAULT_HEARTBEAT_SECONDS)),
        ...(wantsOpamp && headers ? { headers } : {}),
      });
    }
    if (wantsMetrics && headers) {
      offers.ownMetrics = create(TelemetryConnectionSettingsSchema, { destinationEndpoint: `${this.deps.config.externalUrl}/v1/metrics`, headers });
    }
    if (!offers.opamp && !offers.ownMetrics) return undefined;
    const digest = createHash("sha256")
      .update(JSON.stringify([offers.opamp?.destinationEndpoint, String(offers.opamp?.heartbeatIntervalSeconds), token ?? null, !!offers.ownMetrics, !!offers.opamp?.headers]))
      .digest();
    const key = digest.toString("hex");
    if (instance.sentSettings === key) return undefined;
    // A token is about to go out: the enrollment token that opened the exchange must still be valid this moment.
    if (token !== undefined && credential.kind === "enrollment" && !(await stillValid(this.deps, credential))) {
      throw new Refused(401, "unauthenticated", ENDED.revoked);
    }
    instance.sentSettings = key;
    return create(ConnectionSettingsOffersSchema, { hash: digest, ...offers });
  }

  /**
   * The token an offer may carry over this session. A session authenticated
   * by a collector token is offered that same token and nothing else: once it
   * is no longer the collector's live token the session is refused (its
   * holder may be the one the token leaked to), never sent the new one.
   */
  private async tokenToOffer(collectorId: string, credential: Credential, mint: boolean): Promise<string | undefined> {
    if (credential.kind === "enrollment") return this.collectorToken(collectorId, mint);
    if ((await this.deps.collectorTokens.verify(credential.token)) !== credential.collectorId) {
      throw new Refused(401, "unauthenticated", ENDED.revoked);
    }
    // A clone split off under its own UID (identity.ts splitClone) holds its original's token: that one is not offered to it.
    return credential.collectorId === collectorId ? credential.token : undefined;
  }

  /**
   * The collector's current token, opened from the store; minted (as
   * SYSTEM_ACTOR) only when it has none and `mint` says an offer needs one.
   * One sealed under a key this server lacks is not replaced: the collector
   * keeps the token it holds, which still works, and the error is logged.
   */
  private async collectorToken(collectorId: string, mint: boolean): Promise<string | undefined> {
    try {
      const stored = await this.deps.collectorTokens.current(collectorId);
      if (stored !== null) return stored;
    } catch (error) {
      // Said once per collector until its token changes, not on every message of every session.
      if (!this.unopenable.has(collectorId)) {
        this.unopenable.add(collectorId);
        this.deps.logger.error(
          { err: error, collectorId, keyId: this.deps.secrets.keyId },
          "opamp: the collector's stored token cannot be opened with this server's secrets key (secrets.keyFile / SVC_SECRETS_KEY must be the same on every replica); not offering it until the token is rotated (POST /collectors/{id}/otlp-token) or the key fixed",
        );
      }
      return undefined;
    }
    this.unopenable.delete(collectorId);
    return mint ? this.mintToken(collectorId) : undefined;
  }

  /** Mints the collector's token for own_metrics when it has none (checked again under the lock: another session may have minted it). */
  private async mintToken(collectorId: string): Promise<string | undefined> {
    return this.lock.run(`token:${collectorId}`, async () => {
      this.minting.add(collectorId);
      try {
        const known = await this.deps.collectorTokens.current(collectorId);
        if (known !== null) return known;
        const { token } = await this.deps.collectorTokens.mint(SYSTEM_ACTOR, collectorId);
        return token;
      } catch (error) {
        // Another replica minted it at the same moment: offer that one.
        if (error instanceof ConflictError) return (await this.deps.collectorTokens.current(collectorId).catch(() => null)) ?? undefined;
        this.deps.logger.warn({ err: error, collectorId }, "opamp: minting the collector token failed");
        return undefined;
      } finally {
        this.minting.delete(collectorId);
      }
    });
  }
}

/** The ws(s) URL of this endpoint under externalUrl, or "" when it is not set. */
export function opampEndpoint(externalUrl: string): string {
  return externalUrl === "" ? "" : externalUrl.replace(/^http/, "ws") + OPAMP_PATH;
}
