/**
 * The OpAMP message handler: one AgentToServer in, the ServerToAgent to
 * answer with out, whatever carried it (opamp-go's Callbacks.OnMessage).
 *
 * - Every message is a contact for presence; health, RemoteConfigStatus and
 *   EffectiveConfig feed presence and the rollout. A description that changes
 *   what matchers read is recorded, with the status, before the reply is
 *   decided, and the reply carries the config rendered for it.
 * - The AgentRemoteConfig bytes are encoded once per config hash, from the
 *   body with its secrets in (Delivery.delivered; kept in memory only), under
 *   the hash of the redacted rendering, which the agent reports back.
 * - A session or exchange that resumes without saying which config the agent
 *   runs is asked for full state, and the target is re-sent unless that
 *   report says the agent has it; not while an HTTP report refused as too
 *   large is held (Sessions.holdReports), then once.
 * - Two live agents with one instance UID (a cloned image) are told apart,
 *   over WebSocket by their sessions, over HTTP by their sequence numbers
 *   (seq-streams.ts): one is given a new UID and its own collector.
 * - Pushes: a new target reaches a collector's open sessions at once
 *   (`pushConfig`), a rotated token its enrollment sessions (`pushSettings`),
 *   an operator's restart request the command (`restartRequested`, once);
 *   HTTP agents get them in the reply to their next poll.
 */
import type { Logger } from "pino";
import { SYSTEM_ACTOR } from "../audit/audit.ts";
import { boundReported } from "../collectors/attributes.ts";
import { COLLECTORS, type Collectors } from "../collectors/collectors.ts";
import type { Presence } from "../collectors/presence.ts";
import { UnauthenticatedError } from "../errors.ts";
import { create } from "@bufbuild/protobuf";
import {
  AgentCapabilities,
  AgentIdentificationSchema,
  CommandType,
  RemoteConfigStatuses,
  ServerToAgentCommandSchema,
  ServerToAgentFlags,
  type AgentToServer,
  type ConnectionSettingsOffers,
  type ServerToAgent,
} from "../gen/opamp/v1/opamp_pb.ts";
import { buildOf, type Builds } from "../collectors/builds.ts";
import type { Restarts } from "../collectors/restarts.ts";
import type { Retargeting } from "../rollout/retarget.ts";
import type { Delivery } from "../rollout/delivery.ts";
import { Refused } from "./credential.ts";
import { attributes, Identity, type IdentityDeps } from "./identity.ts";
import { SeqStreams } from "./seq-streams.ts";
import type { Instance, Session, Sessions } from "./sessions.ts";
import { ConnectionSettings, DEFAULT_HEARTBEAT_SECONDS, has, type SettingsDeps } from "./settings.ts";
import { RemoteConfigCache, SERVER_CAPABILITIES, serverToAgent } from "./wire.ts";

/** The longest observed HTTP polling interval presence waits on (three of them before offline). */
const MAX_POLL_SECONDS = 3600;
const REPORT_FULL_STATE = BigInt(ServerToAgentFlags.ServerToAgentFlags_ReportFullState);
const REPORT_AVAILABLE_COMPONENTS = BigInt(ServerToAgentFlags.ServerToAgentFlags_ReportAvailableComponents);

export type HandlerDeps = IdentityDeps &
  SettingsDeps & {
    collectors: Pick<Collectors, "report">;
    delivery: Omit<Delivery, "onTargetChanged">;
    presence: Pick<Presence, "seen" | "gone">;
    retargeting: Pick<Retargeting, "settled">;
    restarts: Pick<Restarts, "pending" | "claim">;
    builds: Pick<Builds, "report" | "hash">;
  };

export interface HandlerOptions {
  /** Overrides `opamp.heartbeatSeconds`; unset there too, each agent keeps its own interval. */
  heartbeatSeconds?: number;
}

/** A ServerToAgent, and the shared encoded remote config to splice into it (encodeServerToAgent). */
export interface Answer {
  reply: ServerToAgent;
  remoteConfig?: Uint8Array;
}

export class MessageHandler {
  private readonly identity: Identity;
  readonly settings: ConnectionSettings;
  private readonly configs = new RemoteConfigCache();
  /** Collectors with a restart request this process heard of (restartRequested) and has not seen delivered. */
  private readonly restartsDue = new Set<string>();

  constructor(
    private readonly deps: HandlerDeps,
    private readonly sessions: Sessions,
    options: HandlerOptions = {},
  ) {
    this.identity = new Identity(deps);
    this.settings = new ConnectionSettings(deps, options.heartbeatSeconds);
  }

  /**
   * Handles one AgentToServer and builds the reply (remote config as shared
   * encoded bytes). `session` is the connection it came over: a persistent
   * (WebSocket) one is attached to its instance for pushes; an HTTP
   * exchange is answered and forgotten.
   */
  async receive(session: Session, message: AgentToServer, log: Logger): Promise<Answer> {
    if (message.instanceUid.length === 0 || message.instanceUid.length > 32) {
      throw new Refused(400, "bad_request", "instance_uid must be 1 to 32 bytes (16 for a UUID).");
    }
    const uid = Buffer.from(message.instanceUid).toString("hex");
    if (session.instance && session.instance.uid !== uid) {
      if (session.reassignedUid !== uid) throw new UnauthenticatedError("One OpAMP session speaks for one instance_uid.");
      // The clone took the UID it was given: from now on the session speaks for that instance.
      session.instance = null;
      session.reassignedUid = null;
    }
    const { credential } = session;
    let instance = session.instance;
    let fullState = false;
    const newSession = session.connection.persistent && session.instance === null;
    if (instance === null) {
      // Each HTTP request and each new session proves its credential for this instance.
      const cached = this.sessions.instance(uid);
      const collectorId =
        credential.kind === "collector" && cached?.collectorId === credential.collectorId
          ? cached.collectorId
          : await this.identity.resolve(credential, uid, message.agentDescription);
      if (cached && cached.collectorId === collectorId) {
        instance = cached;
        fullState = isGap(cached, message);
      } else {
        // Unknown here (new, or this server restarted): ask for everything unless this is it.
        fullState = !message.agentDescription;
        instance = newInstance(uid, collectorId, message);
        this.sessions.remember(instance);
      }
      if (!session.connection.persistent) {
        // An HTTP exchange has no session to show a second agent: its sequence number does.
        const { stream, clone } = (instance.streams ??= new SeqStreams()).observe(message.sequenceNum);
        if (clone || stream.newUid) {
          stream.newUid ??= this.split(instance, log);
          // Decided once per stream: a failed split is tried again by its next message.
          const newUid = await stream.newUid.catch((error: unknown) => {
            stream.newUid = null;
            throw error;
          });
          return cloneAnswer(message, newUid);
        }
      }
    } else if (session.connection.persistent && instance.session !== session && instance.session !== null && !instance.session.closed) {
      // Another live session took this instance over while this one still speaks for it: two agents share
      // one instance_uid (a cloned VM image), not a reconnect, whose old socket falls silent.
      return this.splitClone(session, instance, message, log);
    } else {
      fullState = isGap(instance, message);
    }
    if (session.connection.persistent && !session.instance) {
      this.sessions.attach(session, instance);
      // Deleting the collector the session turned out to be ends it too.
      session.hold?.standOn(`${COLLECTORS}/${instance.collectorId}`);
    }
    instance.lastSeq = message.sequenceNum;
    instance.capabilities = message.capabilities;
    const now = Date.now();
    const gap = Math.round((now - instance.seenAt) / 1000);
    if (instance.session === null && instance.seenAt > 0 && gap >= DEFAULT_HEARTBEAT_SECONDS) instance.pollSeconds = Math.min(gap, MAX_POLL_SECONDS);
    instance.seenAt = now;
    const collectorId = instance.collectorId;
    /** What matchers read changed: the collector is being rendered again (retarget.ts). */
    let attributesChanged = false;
    if (message.agentDescription) {
      // A full report: the agent may have restarted and lost what it was sent.
      instance.sentHash = null;
      instance.sentSettings = null;
      // Kept as facts (service.version among them, which picks upstream's names); written only when changed.
      // Awaited: when what matchers read changed, the config this reply carries must be the one rendered
      // for it, not the one before (a supervisor would run the stale one first, restarting its collector twice).
      attributesChanged = await this.deps.collectors
        .report(SYSTEM_ACTOR, collectorId, boundReported(attributes(message.agentDescription)))
        .catch((error: unknown) => {
          log.warn({ err: error, collectorId }, "opamp: recording the agent's description failed");
          return false;
        });
    }
    const status = message.remoteConfigStatus;
    const reportsConfig = status !== undefined && status.lastRemoteConfigHash.length > 0 && status.status !== RemoteConfigStatuses.RemoteConfigStatuses_UNSET;
    // An HTTP report refused as too large: not asked for while held (it would come again at once), then once.
    const reportHold = session.connection.persistent ? null : this.sessions.reportHold(uid, credential);
    if (reportHold === "due") fullState = true;
    // Still waiting for the report that says which config it runs while it is held.
    instance.awaitingReport = reportHold === "held" && instance.awaitingReport && !reportsConfig;
    if ((newSession || fullState || message.agentDescription) && !reportsConfig) {
      // It resumes (a new session, a gap, a restart here or there) without saying which config it runs
      // (no status, or an UNSET one with no hash, as a freshly started client sends):
      // unknown, whatever was reported or sent before. Without a full report either, ask for one and
      // decide after it (opamp-go's first message on a redial carries neither).
      instance.reportedHash = null;
      instance.sentHash = null;
      if (!message.agentDescription) {
        fullState = true;
        instance.awaitingReport = true;
      }
    }

    // The agent's own messages may quote its config, secrets too: redacted before presence or the rollout keeps them.
    if (message.health) {
      instance.healthy = message.health.healthy;
      instance.healthError = message.health.lastError ? await this.deps.delivery.redact(collectorId, message.health.lastError) : null;
    }
    if (reportsConfig) {
      const hash = Buffer.from(status.lastRemoteConfigHash).toString("hex");
      instance.reportedHash = hash;
      const state =
        status.status === RemoteConfigStatuses.RemoteConfigStatuses_APPLIED
          ? "applied"
          : status.status === RemoteConfigStatuses.RemoteConfigStatuses_APPLYING
            ? "applying"
            : "failed";
      const error = state === "failed" && status.errorMessage ? await this.deps.delivery.redact(collectorId, status.errorMessage) : "";
      instance.configError = state === "failed" ? error || "the collector could not apply the config" : state === "applied" ? null : instance.configError;
      const recorded = this.deps.delivery.report(collectorId, { hash, state, ...(state === "failed" ? { error } : {}) });
      // Before the re-rendered config goes out: reported after it, the config the agent ran until now
      // would read as the agent going back from the new one ("rolled back by the collector").
      if (attributesChanged) await recorded.catch((error: unknown) => log.warn({ err: error }, "opamp: background update failed"));
      else background(log, recorded);
    }
    if (attributesChanged) await this.deps.retargeting.settled(collectorId);
    if (message.effectiveConfig?.configMap) {
      // One equal to the last kept costs nothing; one over its rate is not read, and the agent is asked
      // for its full state (which holds it) once welcome (effective-intake.ts).
      const map = message.effectiveConfig.configMap.configMap;
      const decoder = new TextDecoder();
      const files = Object.keys(map)
        .sort()
        .map((name) => ({ name, contentType: map[name]!.contentType, body: decoder.decode(map[name]!.body) }));
      background(
        log,
        this.deps.delivery.setEffective(collectorId, files).then((intake) => {
          instance.effectiveSkipped = intake === "limited";
        }),
      );
    } else if (instance.effectiveSkipped && this.deps.delivery.effectiveWelcome(collectorId)) {
      instance.effectiveSkipped = false;
      fullState = true;
    }
    const askComponents = await this.noteBuild(instance, message, log);
    if (message.agentDisconnect) {
      background(log, this.deps.presence.gone(collectorId));
    } else {
      // The operator's interval when offered; an HTTP agent's own cadence otherwise; opamp-go's default on WebSocket.
      const offered = has(instance.capabilities, AgentCapabilities.AgentCapabilities_ReportsHeartbeat) ? this.settings.offeredHeartbeat : null;
      const interval = offered ?? (instance.session === null ? instance.pollSeconds : DEFAULT_HEARTBEAT_SECONDS);
      background(
        log,
        this.deps.presence.seen(collectorId, {
          channel: "opamp",
          intervalSeconds: interval,
          acceptsRemoteConfig: has(instance.capabilities, AgentCapabilities.AgentCapabilities_AcceptsRemoteConfig),
          ...(instance.healthy !== undefined ? { healthy: instance.healthy } : {}),
          error: instance.configError ?? instance.healthError,
        }),
      );
    }

    // opamp-go acts on a command alone and ignores the rest of its message: the config and settings follow in the next one.
    const command = await this.restartCommand(instance);
    if (command) return { reply: serverToAgent({ instanceUid: message.instanceUid, capabilities: SERVER_CAPABILITIES, command }) };
    const reply = serverToAgent({
      instanceUid: message.instanceUid,
      capabilities: SERVER_CAPABILITIES,
      flags: (fullState && reportHold !== "held" ? REPORT_FULL_STATE : 0n) | (askComponents ? REPORT_AVAILABLE_COMPONENTS : 0n),
    });
    const settings = await this.settings.offer(instance, credential);
    if (settings) reply.connectionSettings = settings;
    return { reply, remoteConfig: await this.remoteConfigFor(instance, log) };
  }

  /**
   * The encoded AgentRemoteConfig when the agent takes remote config and runs
   * (or was sent) another hash: the delivered body, secrets in, under the hash
   * of the redacted rendering. None while a secret it names cannot be opened
   * (the rollout records and logs that); a later message tries again.
   */
  private async remoteConfigFor(instance: Instance, log: Logger): Promise<Uint8Array | undefined> {
    if (instance.awaitingReport || !has(instance.capabilities, AgentCapabilities.AgentCapabilities_AcceptsRemoteConfig)) return undefined;
    // Decided on the target alone, from memory: most messages come from collectors that run it.
    const state = await this.deps.delivery.targetOf(instance.collectorId);
    // A target the collector rolled back from on its own is not offered again until a retry or a new one.
    if (!state || state.collectorRollback) return undefined;
    // A retry offers the same hash again: the offer is the hash and how often it was retried.
    const offerOf = (hash: string) => (state.retries ? `${hash}#${state.retries}` : hash);
    if (state.targetHash === instance.reportedHash || offerOf(state.targetHash) === instance.sentHash) return undefined;
    const target = await this.deps.delivery.target(instance.collectorId);
    if (!target) return undefined;
    const hash = target.rendered.hash;
    const offer = offerOf(hash);
    if (hash === instance.reportedHash || offer === instance.sentHash) return undefined;
    // Claimed before the vault is read, so a push and a reply in between do not both send it.
    instance.sentHash = offer;
    const body = await this.deps.delivery.delivered(instance.collectorId, target.rendered);
    if (body === null) {
      if (instance.sentHash === offer) instance.sentHash = null;
      return undefined;
    }
    background(log, this.deps.delivery.fetched(instance.collectorId, hash));
    return this.configs.get(hash, body, yamlType(target.rendered.contentType));
  }

  /**
   * Keeps the build the agent reports (its available components) when it is
   * new. opamp-go sends only the hash unless asked: answers whether to ask
   * for the full report (a hash that is not the one stored).
   */
  private async noteBuild(instance: Instance, message: AgentToServer, log: Logger): Promise<boolean> {
    const available = message.availableComponents;
    if (!available || available.hash.length === 0 || !has(instance.capabilities, AgentCapabilities.AgentCapabilities_ReportsAvailableComponents)) return false;
    const hash = Buffer.from(available.hash).toString("hex");
    if (instance.componentsHash === hash) return false;
    if (Object.keys(available.components).length > 0) {
      instance.componentsHash = hash;
      background(log, this.deps.builds.report(instance.collectorId, hash, buildOf(available.components)));
      return false;
    }
    if ((await this.deps.builds.hash(instance.collectorId)) === hash) {
      instance.componentsHash = hash;
      return false;
    }
    return true;
  }

  /**
   * Gives the agent of a displaced session a new instance UID and its own
   * collector, once per session: it is told again, and nothing else, until
   * it speaks with the new UID.
   */
  private async splitClone(session: Session, instance: Instance, message: AgentToServer, log: Logger): Promise<Answer> {
    session.reassignedUid ??= await this.split(instance, log);
    return cloneAnswer(message, session.reassignedUid);
  }

  /** A new collector and instance UID (hex) for a second agent presenting `instance`'s UID (Identity.splitClone). */
  private async split(instance: Instance, log: Logger): Promise<string> {
    const clone = await this.identity.splitClone(instance.uid, instance.collectorId);
    log.warn(
      { collectorId: instance.collectorId, cloneId: clone.collectorId, instanceUid: instance.uid },
      "opamp: two live agents present one instance_uid (a cloned image); one is given a new instance_uid and its own collector",
    );
    return clone.uid;
  }

  /**
   * A restart of the collector was asked for (here or on another replica):
   * its connected sessions that take the command are sent it, the first
   * to claim the request only; an HTTP poller gets it in its next reply.
   */
  async restartRequested(collectorId: string): Promise<void> {
    this.restartsDue.add(collectorId);
    for (const instance of [...this.sessions.connected(collectorId)]) {
      const session = instance.session;
      if (!session || session.closed || session.hold?.ended) continue;
      try {
        const command = await this.restartCommand(instance);
        if (command && instance.session === session && !session.closed) {
          session.connection.send(serverToAgent({ instanceUid: Buffer.from(instance.uid, "hex"), capabilities: SERVER_CAPABILITIES, command }));
        }
      } catch (error) {
        this.deps.logger.warn({ err: error, collectorId }, "opamp: sending the restart command failed");
      }
    }
  }

  /** The restart command, when one is due for this instance's collector and this caller claimed it. */
  private async restartCommand(instance: Instance): Promise<ServerToAgent["command"]> {
    const { collectorId } = instance;
    if (!this.restartsDue.has(collectorId) || !has(instance.capabilities, AgentCapabilities.AgentCapabilities_AcceptsRestartCommand)) return undefined;
    const request = await this.deps.restarts.pending(collectorId);
    const claimed = request !== null && (await this.deps.restarts.claim(request));
    // Sent, lapsed, or sent by another replica: nothing is due any more. A new request is heard again.
    if (!request || claimed || !(await this.deps.restarts.pending(collectorId))) this.restartsDue.delete(collectorId);
    return claimed ? create(ServerToAgentCommandSchema, { type: CommandType.CommandType_Restart }) : undefined;
  }

  /** Sends a collector's connected sessions its new target, if they have not got it. */
  async pushConfig(collectorId: string): Promise<void> {
    for (const instance of this.sessions.connected(collectorId)) {
      const session = instance.session;
      if (!session || session.hold?.ended) continue;
      try {
        const remoteConfig = await this.remoteConfigFor(instance, this.deps.logger);
        if (!remoteConfig || instance.session !== session) continue;
        const reply = serverToAgent({ instanceUid: Buffer.from(instance.uid, "hex"), capabilities: SERVER_CAPABILITIES });
        session.connection.send(reply, remoteConfig);
      } catch (error) {
        this.deps.logger.warn({ err: error, collectorId }, "opamp: pushing the config failed");
      }
    }
  }

  /**
   * Sends a collector's connected sessions new connection settings (its token
   * was rotated): those opened with an enrollment token that is still valid
   * get the new token; those opened with the old token are closed instead.
   */
  async pushSettings(collectorId: string): Promise<void> {
    for (const instance of [...this.sessions.connected(collectorId)]) {
      const session = instance.session;
      if (!session) continue;
      if (session.closed || session.hold?.ended) continue;
      let settings: ConnectionSettingsOffers | undefined;
      try {
        settings = await this.settings.offer(instance, session.credential);
      } catch (error) {
        if (error instanceof Refused) this.sessions.refuse(session, 1008, error.message);
        else this.deps.logger.warn({ err: error, collectorId }, "opamp: pushing connection settings failed");
        continue;
      }
      if (!settings || instance.session !== session || session.closed) continue;
      const reply = serverToAgent({ instanceUid: Buffer.from(instance.uid, "hex"), capabilities: SERVER_CAPABILITIES, connectionSettings: settings });
      session.connection.send(reply);
    }
  }
}

/**
 * Tells a clone's agent its new instance UID (16 bytes: opamp-go refuses any
 * other length) and to report its full state, which it sends under that UID
 * (client/internal/receivedprocessor.go rcvAgentIdentification).
 */
function cloneAnswer(message: AgentToServer, newUid: string): Answer {
  const agentIdentification = create(AgentIdentificationSchema, { newInstanceUid: Buffer.from(newUid, "hex") });
  return { reply: serverToAgent({ instanceUid: message.instanceUid, capabilities: SERVER_CAPABILITIES, flags: REPORT_FULL_STATE, agentIdentification }) };
}

/** A sequence_num that does not follow the last one, on a message that is not itself a full report. */
function isGap(instance: Instance, message: AgentToServer): boolean {
  return message.sequenceNum !== instance.lastSeq + 1n && !message.agentDescription;
}

function background(log: Logger, work: Promise<unknown>): void {
  work.catch((error) => log.warn({ err: error }, "opamp: background update failed"));
}

function yamlType(contentType: string): string {
  return /ya?ml/i.test(contentType) ? "text/yaml" : contentType;
}

/**
 * An instance this server hears from for the first time: nothing reported or
 * sent yet, no session, and not seen before (so its first poll sets no interval).
 */
export function newInstance(uid: string, collectorId: string, first: Pick<AgentToServer, "sequenceNum" | "capabilities">): Instance {
  return {
    uid,
    collectorId,
    lastSeq: first.sequenceNum,
    capabilities: first.capabilities,
    reportedHash: null,
    sentHash: null,
    sentSettings: null,
    healthy: undefined,
    healthError: null,
    configError: null,
    session: null,
    seenAt: 0,
    pollSeconds: DEFAULT_HEARTBEAT_SECONDS,
    awaitingReport: false,
    effectiveSkipped: false,
    componentsHash: null,
    streams: null,
  };
}
