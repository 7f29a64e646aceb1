/**
 * The connection settings offered to OpAMP agents: the OpAMP endpoint with
 * the collector's control token and the heartbeat interval, and the
 * own-metrics destination with the collector's metrics credential
 * (collectors/tokens.ts), each minted for the offer when the collector has
 * none.
 *
 * A control token is offered only over a session authenticated by that very
 * token, so a rotated token never reaches a session opened with the old one
 * (that session is closed instead). A session opened with an enrollment token
 * (bound to its instance at the first message) is the enrollment's own
 * channel: it is offered the collector's current tokens, also after a
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
import type { CollectorCredential, CollectorTokens } from "../collectors/tokens.ts";
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
  metricsTokens: Pick<CollectorTokens, "current" | "mint">;
  secrets: Pick<Secrets, "keyId">;
  logger: Logger;
};

/** What the log and the operator call each credential. */
const CREDENTIAL_NAMES: Record<CollectorCredential, { name: string; rotate: string }> = {
  control: { name: "token", rotate: "POST /collectors/{id}/otlp-token" },
  metrics: { name: "metrics credential", rotate: "POST /collectors/{id}/metrics-token" },
};

export class ConnectionSettings {
  /** `<credential> <collectorId>` of tokens this process is minting for an offer (the offer itself carries it; no push). */
  private readonly minting = new Set<string>();
  /** `<credential> <collectorId>` of stored tokens this server's key could not open, already logged. */
  private readonly unopenable = new Set<string>();
  /** One mint per collector and credential at a time. */
  private readonly lock = new KeyedLock();
  private readonly tokens: Record<CollectorCredential, Pick<CollectorTokens, "current" | "mint">>;

  constructor(
    private readonly deps: SettingsDeps,
    /** Overrides `opamp.heartbeatSeconds`. */
    private readonly heartbeatSeconds?: number,
  ) {
    this.tokens = { control: deps.collectorTokens, metrics: deps.metricsTokens };
  }

  /** The interval the operator set, offered to agents that report heartbeats; null: each keeps its own. */
  get offeredHeartbeat(): number | null {
    return this.heartbeatSeconds ?? this.deps.config.opamp.heartbeatSeconds;
  }

  /**
   * One of the collector's credentials was rotated (here or on another
   * replica): its stored token may open now. True when its sessions should
   * be offered the new one; false while this process mints it for an offer,
   * which carries it.
   */
  rotated(credential: CollectorCredential, collectorId: string): boolean {
    const key = `${credential} ${collectorId}`;
    this.unopenable.delete(key);
    return !this.minting.has(key);
  }

  /**
   * Connection settings to offer when they changed since the last offer to
   * this instance. The tokens are the collector's stored ones, so the offer
   * is the same after a restart and on every replica.
   *
   * The OpAMP offer carries the collector's control token; the own-metrics
   * offer its metrics credential, which a rotation of the control token
   * leaves as it is: the supervisor writes the own-metrics headers into the
   * collector's config, and a changed header would restart the collector.
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
    const speaks = (wantsMetrics || wantsOpamp) && (await this.speaksFor(instance.collectorId, credential));
    const control = speaks && wantsOpamp ? await this.controlToken(instance.collectorId, credential) : undefined;
    const metrics = speaks && wantsMetrics ? await this.storedToken("metrics", instance.collectorId) : undefined;
    const offered = this.offeredHeartbeat;
    if ((heartbeat && offered !== null) || control !== undefined) {
      offers.opamp = create(OpAMPConnectionSettingsSchema, {
        destinationEndpoint: control !== undefined ? opampEndpoint(this.deps.config.externalUrl) : "",
        // Unset by the operator: opamp-go's WebSocket default (0 would turn its heartbeats off), and 0 over
        // HTTP, which opamp-go refuses as a polling interval, so the agent keeps its own.
        heartbeatIntervalSeconds: !heartbeat ? 0n : BigInt(offered ?? (instance.session === null ? 0 : DEFAULT_HEARTBEAT_SECONDS)),
        ...(control !== undefined ? { headers: bearerHeaders(control) } : {}),
      });
    }
    if (metrics !== undefined) {
      offers.ownMetrics = create(TelemetryConnectionSettingsSchema, {
        destinationEndpoint: `${this.deps.config.externalUrl}/v1/metrics`,
        headers: bearerHeaders(metrics),
      });
    }
    if (!offers.opamp && !offers.ownMetrics) return undefined;
    const digest = createHash("sha256")
      .update(JSON.stringify([offers.opamp?.destinationEndpoint, String(offers.opamp?.heartbeatIntervalSeconds), control ?? null, metrics ?? null]))
      .digest();
    const key = digest.toString("hex");
    if (instance.sentSettings === key) return undefined;
    // A token is about to go out: the enrollment token that opened the exchange must still be valid this moment.
    if ((control !== undefined || metrics !== undefined) && credential.kind === "enrollment" && !(await stillValid(this.deps, credential))) {
      throw new Refused(401, "unauthenticated", ENDED.revoked);
    }
    instance.sentSettings = key;
    return create(ConnectionSettingsOffersSchema, { hash: digest, ...offers });
  }

  /**
   * Whether this session may be offered the instance's collector's tokens. A
   * session authenticated by a collector token is refused once that token is
   * no longer the collector's live one (its holder may be the one it leaked
   * to), never sent the new one. A clone split off under its own UID
   * (identity.ts splitClone) holds its original's token: it is offered none.
   */
  private async speaksFor(collectorId: string, credential: Credential): Promise<boolean> {
    if (credential.kind === "enrollment") return true;
    if ((await this.deps.collectorTokens.verify(credential.token)) !== credential.collectorId) {
      throw new Refused(401, "unauthenticated", ENDED.revoked);
    }
    return credential.collectorId === collectorId;
  }

  /** The control token an OpAMP offer carries: the session's own when it opened with one, else the collector's stored one. */
  private async controlToken(collectorId: string, credential: Credential): Promise<string | undefined> {
    return credential.kind === "collector" ? credential.token : this.storedToken("control", collectorId);
  }

  /**
   * The collector's current token of this credential, opened from the store;
   * minted (as SYSTEM_ACTOR) when it has none. One sealed under a key this
   * server lacks is not replaced: the collector keeps the token it holds,
   * which still works, and the error is logged.
   */
  private async storedToken(credential: CollectorCredential, collectorId: string): Promise<string | undefined> {
    const key = `${credential} ${collectorId}`;
    try {
      const stored = await this.tokens[credential].current(collectorId);
      if (stored !== null) return stored;
    } catch (error) {
      // Said once per collector until its token changes, not on every message of every session.
      if (!this.unopenable.has(key)) {
        this.unopenable.add(key);
        const { name, rotate } = CREDENTIAL_NAMES[credential];
        this.deps.logger.error(
          { err: error, collectorId, keyId: this.deps.secrets.keyId },
          `opamp: the collector's stored ${name} cannot be opened with this server's secrets key (secrets.keyFile / SVC_SECRETS_KEY must be the same on every replica); not offering it until it is rotated (${rotate}) or the key fixed`,
        );
      }
      return undefined;
    }
    this.unopenable.delete(key);
    return this.mintToken(credential, collectorId);
  }

  /** Mints the collector's token of this credential when it has none (checked again under the lock: another session may have minted it). */
  private async mintToken(credential: CollectorCredential, collectorId: string): Promise<string | undefined> {
    const key = `${credential} ${collectorId}`;
    const tokens = this.tokens[credential];
    return this.lock.run(key, async () => {
      this.minting.add(key);
      try {
        const known = await tokens.current(collectorId);
        if (known !== null) return known;
        const { token } = await tokens.mint(SYSTEM_ACTOR, collectorId);
        return token;
      } catch (error) {
        // Another replica minted it at the same moment: offer that one.
        if (error instanceof ConflictError) return (await tokens.current(collectorId).catch(() => null)) ?? undefined;
        this.deps.logger.warn({ err: error, collectorId, credential }, "opamp: minting the collector's token for an offer failed");
        return undefined;
      } finally {
        this.minting.delete(key);
      }
    });
  }
}

/** `Authorization: Bearer <token>` as OpAMP headers. */
const bearerHeaders = (token: string) => create(HeadersSchema, { headers: [create(HeaderSchema, { key: "Authorization", value: `Bearer ${token}` })] });

/** The ws(s) URL of this endpoint under externalUrl, or "" when it is not set. */
export function opampEndpoint(externalUrl: string): string {
  return externalUrl === "" ? "" : externalUrl.replace(/^http/, "ws") + OPAMP_PATH;
}
