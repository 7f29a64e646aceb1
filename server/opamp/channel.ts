/**
 * The OpAMP server (`/v1/opamp`, DESIGN.md §3–§5) for Runtime O collectors,
 * over WebSocket (varint header 0 + protobuf per frame) and plain HTTP POST.
 *
 * - Auth comes before any protobuf is read: a per-collector token (`svcct_`)
 *   names its collector; an OpAMP enrollment token (`svcen_`) is checked at
 *   once and redeemed with the first message's instance_uid, which binds it.
 * - First contact creates the collector (unless the token was pre-bound) and
 *   records `opamp_instances/<uid>` so a reconnect maps to the same one.
 * - Every message is a contact for presence; health, RemoteConfigStatus and
 *   EffectiveConfig feed presence and the rollout.
 * - A publish reaches connected WebSocket sessions at once through the store's
 *   change feed; HTTP agents get it in the reply to their next poll. The
 *   AgentRemoteConfig bytes are encoded once per config hash, from the body
 *   with its secrets in (Rollouts.delivered; kept in memory only), under the
 *   hash of the redacted rendering, which the agent reports back.
 * - Overload is refused, not queued: past `opamp.maxConnections` sessions or
 *   `opamp.maxConcurrentRequests` requests in flight the answer is 503 with a
 *   jittered Retry-After, before auth touches the store. A session whose
 *   collector stops reading is closed (1013), not buffered for; it is sent its
 *   config again when it reconnects.
 * - A session whose credential does not speak for its instance (an enrollment
 *   token bound to another instance, as on a cloned VM image) is told so and
 *   held open, unheard, for `refusedHoldSeconds` before it is closed: opamp-go
 *   redials at once after a session ends and ignores ServerErrorResponse, so
 *   an early close would be a reconnect storm.
 * - A session or exchange that resumes without saying which config the agent
 *   runs is asked for full state, and the target is re-sent unless that
 *   report says the agent has it.
 * - A session lasts only as long as its credential (server/auth/live.ts):
 *   rotating a collector token, revoking or expiring the enrollment token,
 *   or deleting the collector closes (1008) every session that stands on it,
 *   on every replica, and each message re-checks the credential first. A
 *   collector token is offered only over a session authenticated by that very
 *   token, so a rotated token never reaches a session opened with the old one
 *   (that session is closed instead). A session opened with an enrollment
 *   token (bound to its instance at the first message) is the enrollment's
 *   own channel: it is offered the collector's current token, also after a
 *   rotation, for as long as the enrollment token itself is valid, and is
 *   closed when it is revoked or expires. (opamp-spec specification.md,
 *   "Revoking Access", at f56c7ae: the Server revokes an Agent's access by
 *   marking its credentials revoked and disconnecting the Client.)
 * - Answers are gzipped for HTTP requests that accept it (Go's transport asks
 *   by itself); WebSocket frames use permessage-deflate when negotiated.
 */
import { create, fromBinary } from "@bufbuild/protobuf";
import { createHash } from "node:crypto";
import { SYSTEM_ACTOR } from "../audit/audit.ts";
import { ENDED, tokenDoc, type LiveCredential, type LiveHold } from "../auth/live.ts";
import { bearerToken, tokenKind } from "../auth/tokens.ts";
import type { App } from "../app.ts";
import { COLLECTORS } from "../collectors/collectors.ts";
import { AppError, ConflictError, UnauthenticatedError, UnavailableError } from "../errors.ts";
import type { KeyValue } from "../gen/opamp/v1/anyvalue_pb.ts";
import {
  AgentCapabilities,
  AgentToServerSchema,
  ConnectionSettingsOffersSchema,
  HeaderSchema,
  HeadersSchema,
  OpAMPConnectionSettingsSchema,
  RemoteConfigStatuses,
  RetryInfoSchema,
  ServerErrorResponseSchema,
  ServerErrorResponseType,
  TelemetryConnectionSettingsSchema,
  ServerCapabilities,
  ServerToAgentFlags,
  type AgentDescription,
  type AgentToServer,
  type ConnectionSettingsOffers,
  type ServerToAgent,
} from "../gen/opamp/v1/opamp_pb.ts";
import { acceptsEncoding } from "../lib/accept-encoding.ts";
import { sendBounded, transportAllowed, type Channel, type ChannelHealth, type ChannelRequest, type ChannelSocket } from "../channel/channel.ts";
import { encodeServerToAgent, frame, PROTOBUF, readProtobufBody, RemoteConfigCache, serverToAgent, unframe } from "./wire.ts";

export const OPAMP_PATH = "/v1/opamp";
/** `opamp_instances/<instance_uid hex>`: which collector an agent instance is. */
export const INSTANCES = "opamp_instances";
/** opamp-go's own heartbeat (WebSocket) and polling (HTTP) interval, used by an agent no one told otherwise. */
export const DEFAULT_HEARTBEAT_SECONDS = 30;
/** The longest observed HTTP polling interval presence waits on (three of them before offline). */
const MAX_POLL_SECONDS = 3600;
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/** An instance with no session and no poll for this long is forgotten (it is re-learnt from the store on return). */
export const IDLE_INSTANCE_SECONDS = 15 * 60;
/** How long a session refused for its instance is held open before the close, which opamp-go answers with an immediate redial. */
export const REFUSED_HOLD_SECONDS = 30;
/**
 * Refused sessions held at once; past it a refused session is closed at once.
 * Held sockets count toward opamp.maxConnections (50,000 by default) and cost
 * one map entry each, so this is a fifth of that: a cloned image on up to
 * 10,000 hosts stays at one session per host per hold time.
 */
export const MAX_HELD_SESSIONS = 10_000;
/** HTTP answers smaller than this are sent as they are: gzip would not shrink them. */
export const GZIP_MIN_BYTES = 512;

export const SERVER_CAPABILITIES = BigInt(
  ServerCapabilities.ServerCapabilities_AcceptsStatus |
    ServerCapabilities.ServerCapabilities_OffersRemoteConfig |
    ServerCapabilities.ServerCapabilities_AcceptsEffectiveConfig |
    ServerCapabilities.ServerCapabilities_OffersConnectionSettings,
);
const REPORT_FULL_STATE = BigInt(ServerToAgentFlags.ServerToAgentFlags_ReportFullState);
const has = (caps: bigint, cap: AgentCapabilities) => (caps & BigInt(cap)) !== 0n;

/** Who the Authorization header says is calling, checked before any protobuf is read (and again on every message). */
type Credential =
  | { kind: "collector"; collectorId: string; token: string }
  | { kind: "enrollment"; token: string; tokenId: string; expiresAt: number };

/** What this process knows of one agent instance, across sessions and polls. */
interface Instance {
  uid: string;
  collectorId: string;
  lastSeq: bigint;
  capabilities: bigint;
  /** The config hash the agent last reported, and the one last sent to it. */
  reportedHash: string | null;
  sentHash: string | null;
  /** Hash of the connection settings last offered. */
  sentSettings: string | null;
  healthy: boolean | undefined;
  healthError: string | null;
  configError: string | null;
  socket: ChannelSocket | null;
  /** Date.now() of the last message, for forgetting idle HTTP agents. */
  seenAt: number;
  /**
   * An HTTP agent's polling interval as observed (seconds): the gap between
   * its polls when at least opamp-go's default, since the interval is its
   * own unless the operator sets one. Quick exchanges in between (a status
   * report right after a config) do not lower it.
   */
  pollSeconds: number;
  /** Full state was asked for: the config is sent after that report, not before (it may say the agent has it). */
  awaitingReport: boolean;
}

interface SessionState {
  credential: Credential;
  /** Ends the session when its credential ends (registered at open). */
  hold: LiveHold | null;
  instance: Instance | null;
  /** Messages are handled one at a time, in order. */
  queue: Promise<void>;
  closed: boolean;
}

/** An error that ends the exchange: 401/4xx over HTTP, a close over WebSocket. */
class Refused extends AppError {}
/** The credential does not speak for this instance_uid: a WebSocket session is held, then closed (see `hold`). */
class InstanceRefused extends AppError {
  constructor(status: 401 | 403, code: string, message: string) {
    super(status, code, message, [], status === 401 ? { "WWW-Authenticate": 'Bearer realm="svc"' } : {});
  }
}

export interface OpampOptions {
  /** Defaults to `opamp.heartbeatSeconds`; unset, each agent keeps its own interval. */
  heartbeatSeconds?: number;
  maxMessageBytes?: number;
  /** Defaults from the server config (`opamp.*`). */
  maxConnections?: number;
  maxConcurrentRequests?: number;
  idleInstanceSeconds?: number;
  /** How long a session refused for its instance is held before its close (REFUSED_HOLD_SECONDS). */
  refusedHoldSeconds?: number;
  maxHeldSessions?: number;
}

/** 503 with a Retry-After spread over [min, max) seconds, so refused agents do not return together. */
function overloaded(message: string, min: number, max: number): UnavailableError {
  return new UnavailableError(message, min + Math.floor(Math.random() * (max - min)), "overloaded");
}

export class OpampChannel implements Channel {
  readonly name = "opamp";
  readonly path = OPAMP_PATH;
  private readonly sockets = new Set<ChannelSocket>();
  private readonly instances = new Map<string, Instance>();
  /** Open WebSocket instances per collector, for pushes. */
  private readonly byCollector = new Map<string, Set<Instance>>();
  /** Collectors whose token this process is minting for an offer (the offer itself carries it; no push). */
  private readonly minting = new Set<string>();
  /** Collectors whose stored token this server's key could not open, already logged. */
  private readonly unopenable = new Set<string>();
  private readonly configs = new RemoteConfigCache();
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly unsubscribe: (() => void)[] = [];
  /** Requests being handled (HTTP polls, and upgrades until they open). */
  private inFlight = 0;
  private readonly sweeper: Timer;
  /** Refused sessions held open → when to close them, oldest first (one hold time for all, so insertion order is deadline order). */
  private readonly held = new Map<ChannelSocket, { at: number; reason: string }>();
  private holdTimer: Timer | null = null;

  constructor(
    private readonly app: App,
    private readonly options: OpampOptions = {},
  ) {
    const idleMs = (options.idleInstanceSeconds ?? IDLE_INSTANCE_SECONDS) * 1000;
    this.sweeper = setInterval(() => this.forgetIdle(Date.now() - idleMs), Math.min(idleMs, 60_000));
    this.sweeper.unref();
    this.unsubscribe.push(
      app.store.watch(
        (changes) => {
          for (const change of changes) {
            if (change.collection === "collector_config" && this.byCollector.has(change.id)) {
              // After the rollout's own listener dropped its cached target.
              queueMicrotask(() => void this.pushConfig(change.id));
            }
          }
        },
        // Publishes may have been missed: re-check every connected collector's target (pushConfig sends only a changed one).
        () => {
          for (const collectorId of this.byCollector.keys()) queueMicrotask(() => void this.pushConfig(collectorId));
        },
      ),
    );
    this.unsubscribe.push(
      // A token rotated here or on another replica (the API's otlp-token, or a mint for an offer): its sessions get the new one.
      app.collectorTokens.onRotate((collectorId) => {
        this.unopenable.delete(collectorId);
        if (this.byCollector.has(collectorId) && !this.minting.has(collectorId)) queueMicrotask(() => void this.pushSettings(collectorId));
      }),
    );
  }

  /** The interval the operator set, offered to agents that report heartbeats; null: each keeps its own. */
  private get offeredHeartbeat(): number | null {
    return this.options.heartbeatSeconds ?? this.app.config.opamp.heartbeatSeconds;
  }

  health(): ChannelHealth {
    return { state: "up", connections: this.sockets.size };
  }

  /** Instances this process remembers (sessions and recent HTTP pollers). */
  get instanceCount(): number {
    return this.instances.size;
  }

  /** Drops instances with no open session that sent nothing since `before` (ms). */
  private forgetIdle(before: number): void {
    for (const [uid, instance] of this.instances) {
      if (instance.socket === null && instance.seenAt < before) this.instances.delete(uid);
    }
  }

  stop(): void {
    clearInterval(this.sweeper);
    if (this.holdTimer) clearTimeout(this.holdTimer);
    this.held.clear();
    for (const off of this.unsubscribe.splice(0)) off();
    for (const ws of this.sockets) ws.close(1001, "server shutting down");
    this.sockets.clear();
  }

  async handle(ctx: ChannelRequest): Promise<Response | undefined> {
    const { req } = ctx;
    const upgrade = req.headers.get("upgrade")?.toLowerCase() === "websocket";
    if (!(req.method === "POST" || (req.method === "GET" && upgrade))) {
      throw new AppError(405, "method_not_allowed", "OpAMP takes a WebSocket upgrade (GET) or a protobuf POST.", [], { Allow: "GET, POST" });
    }
    if (!transportAllowed(ctx)) {
      throw new AppError(
        403,
        "tls_required",
        "OpAMP carries Bearer tokens: connect over TLS (wss:// or https://), through a trusted TLS proxy, or from loopback.",
      );
    }
    const limits = this.app.config.opamp;
    if (upgrade && this.sockets.size >= (this.options.maxConnections ?? limits.maxConnections)) {
      throw overloaded("This server holds as many OpAMP sessions as it is configured for; retry later or connect to another replica.", 10, 40);
    }
    if (this.inFlight >= (this.options.maxConcurrentRequests ?? limits.maxConcurrentRequests)) {
      throw overloaded("Too many OpAMP requests are being handled; retry shortly.", 1, 5);
    }
    this.inFlight++;
    try {
      return await this.exchange(ctx, upgrade);
    } finally {
      this.inFlight--;
    }
  }

  private async exchange(ctx: ChannelRequest, upgrade: boolean): Promise<Response | undefined> {
    const { req } = ctx;
    const credential = await this.authenticate(req);
    if (upgrade) {
      const state: SessionState = { credential, hold: null, instance: null, queue: Promise.resolve(), closed: false };
      if (ctx.server.upgrade(req, { data: { channel: this, state } })) return undefined;
      throw new AppError(400, "bad_upgrade", "The WebSocket upgrade failed.");
    }
    const body = await readProtobufBody(req, this.options.maxMessageBytes ?? MAX_MESSAGE_BYTES);
    let message: AgentToServer;
    try {
      message = fromBinary(AgentToServerSchema, body);
    } catch {
      throw new AppError(400, "bad_request", "The body is not an AgentToServer message.");
    }
    const { reply, remoteConfig } = await this.receive(credential, message, null, ctx.log).catch((error: unknown) => {
      // opamp-go does not retry a 401 (it waits its polling interval); the header says how long asking again is pointless.
      if (error instanceof InstanceRefused) error.headers["Retry-After"] = String(Math.ceil(this.holdSeconds));
      throw error;
    });
    const answer = encodeServerToAgent(reply, remoteConfig) as Uint8Array<ArrayBuffer>;
    const headers: Record<string, string> = { "Content-Type": PROTOBUF, Vary: "Accept-Encoding" };
    if (answer.length >= GZIP_MIN_BYTES && acceptsEncoding(req.headers.get("accept-encoding"), "gzip")) {
      headers["Content-Encoding"] = "gzip";
      return new Response(Bun.gzipSync(answer), { headers });
    }
    return new Response(answer, { headers });
  }

  open(ws: ChannelSocket): void {
    this.sockets.add(ws);
    const state = ws.data.state as SessionState;
    state.hold = this.app.live.register(standsOn(state.credential), (reason) => this.refuse(ws, 1008, reason));
  }

  message(ws: ChannelSocket, data: string | Buffer): void {
    const state = ws.data.state as SessionState;
    state.queue = state.queue.then(async () => {
      if (state.closed) return;
      if (state.hold?.ended || !(await this.stillValid(state.credential))) return this.refuse(ws, 1008, ENDED.revoked);
      if (state.closed) return;
      if (typeof data === "string") return this.refuse(ws, 1003, "OpAMP frames are binary");
      if (data.byteLength > (this.options.maxMessageBytes ?? MAX_MESSAGE_BYTES)) return this.refuse(ws, 1009, "message too large");
      let message: AgentToServer;
      try {
        message = fromBinary(AgentToServerSchema, unframe(data));
      } catch (error) {
        return this.refuse(ws, 1003, (error as Error).message.slice(0, 100));
      }
      try {
        const { reply, remoteConfig } = await this.receive(state.credential, message, ws, this.app.logger);
        if (!state.closed) sendBounded(ws, frame(encodeServerToAgent(reply, remoteConfig)));
      } catch (error) {
        if (error instanceof InstanceRefused) return this.hold(ws, message.instanceUid, error.message);
        if (error instanceof AppError) return this.refuse(ws, 1008, error.message.slice(0, 120));
        this.app.logger.error({ err: error }, "opamp message failed");
        this.refuse(ws, 1011, "internal error");
      }
    });
  }

  close(ws: ChannelSocket): void {
    const state = ws.data.state as SessionState;
    state.closed = true;
    state.hold?.release();
    this.sockets.delete(ws);
    this.held.delete(ws);
    const instance = state.instance;
    if (instance && instance.socket === ws) {
      instance.socket = null;
      const set = this.byCollector.get(instance.collectorId);
      set?.delete(instance);
      if (set?.size === 0) this.byCollector.delete(instance.collectorId);
    }
  }

  private refuse(ws: ChannelSocket, code: number, reason: string): void {
    (ws.data.state as SessionState).closed = true;
    ws.close(code, reason);
  }

  private get holdSeconds(): number {
    return this.options.refusedHoldSeconds ?? REFUSED_HOLD_SECONDS;
  }

  /**
   * Tells a session its credential does not speak for its instance
   * (ServerErrorResponse UNAVAILABLE with RetryInfo, for clients that honour
   * it), then ignores it until the hold time is up and closes it with 1008.
   * opamp-go redials at once when a session ends, so this keeps such a client
   * to one session per hold time; a held socket costs one map entry and
   * shares one timer.
   */
  private hold(ws: ChannelSocket, instanceUid: Uint8Array, reason: string): void {
    const state = ws.data.state as SessionState;
    state.closed = true;
    if (this.held.size >= (this.options.maxHeldSessions ?? MAX_HELD_SESSIONS)) return void ws.close(1008, reason.slice(0, 120));
    const reply = serverToAgent({
      instanceUid,
      capabilities: SERVER_CAPABILITIES,
      errorResponse: create(ServerErrorResponseSchema, {
        type: ServerErrorResponseType.ServerErrorResponseType_Unavailable,
        errorMessage: reason,
        Details: { case: "retryInfo", value: create(RetryInfoSchema, { retryAfterNanoseconds: BigInt(Math.round(this.holdSeconds * 1e9)) }) },
      }),
    });
    sendBounded(ws, frame(encodeServerToAgent(reply)));
    this.held.set(ws, { at: Date.now() + this.holdSeconds * 1000, reason: reason.slice(0, 120) });
    if (!this.holdTimer) this.scheduleHeldCloses();
  }

  /** Closes the held sessions that are due, then sleeps until the next one is. */
  private scheduleHeldCloses(): void {
    const now = Date.now();
    for (const [ws, { at, reason }] of this.held) {
      if (at > now) {
        this.holdTimer = setTimeout(() => this.scheduleHeldCloses(), at - now);
        this.holdTimer.unref();
        return;
      }
      this.held.delete(ws);
      ws.close(1008, reason);
    }
    this.holdTimer = null;
  }

  /** Refused sessions being held open. */
  get heldCount(): number {
    return this.held.size;
  }

  /** The credential of the request; 401 for none, Basic, unknown, revoked or expired. */
  private async authenticate(req: Request): Promise<Credential> {
    const token = bearerToken(req.headers.get("authorization"));
    if (token === null) throw new UnauthenticatedError("OpAMP needs 'Authorization: Bearer <token>': a collector token or an OpAMP enrollment token.");
    const kind = tokenKind(token);
    if (kind === "collector") {
      const collectorId = await this.app.collectorTokens.verify(token);
      if (collectorId !== null) return { kind: "collector", collectorId, token };
    } else if (kind === "enrollment") {
      const enrollment = await this.app.enrollment.opampToken(token);
      if (enrollment) return { kind: "enrollment", token, tokenId: enrollment.tokenId, expiresAt: Date.parse(enrollment.expiresAt) };
    }
    throw new UnauthenticatedError("The Bearer token is not valid, or has been revoked or has expired.");
  }

  /** Whether the credential a session opened with still holds (not rotated, revoked, expired, or its collector deleted). */
  private async stillValid(credential: Credential): Promise<boolean> {
    if (credential.kind === "collector") return (await this.app.collectorTokens.verify(credential.token)) === credential.collectorId;
    return Date.now() < credential.expiresAt && (await this.app.enrollment.usableForOpamp(credential.token));
  }

  /** Serialises work per key (first contact of one instance must create one collector). */
  private async locked<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(key) ?? Promise.resolve();
    const run = previous.then(work, work);
    const tail = run.catch(() => {});
    this.locks.set(key, tail);
    try {
      return await run;
    } finally {
      if (this.locks.get(key) === tail) this.locks.delete(key);
    }
  }

  /** Which collector this message's instance is: by token, by a known instance, or a new collector. */
  private async resolveCollector(credential: Credential, uid: string, description: AgentDescription | undefined): Promise<string> {
    const known = await this.app.store.get<{ collectorId: string }>(INSTANCES, uid);
    if (credential.kind === "collector") {
      // One collector's token must not take over another's instance (it would
      // decide what that host becomes when it next enrolls); a deleted
      // collector's instances are free to be claimed.
      if (known && known.data.collectorId !== credential.collectorId && (await this.exists(known.data.collectorId))) {
        throw new InstanceRefused(403, "permission_denied", "This instance_uid belongs to another collector; a collector token speaks only for its own collector's instances.");
      }
      if (known?.data.collectorId !== credential.collectorId) await this.remember(uid, credential.collectorId);
      return credential.collectorId;
    }
    if (known && (await this.exists(known.data.collectorId))) {
      // A known instance is its collector's. instance_uids are not secrets, so an enrollment token speaks for
      // one only when it already enrolls that collector (made for it, or bound by this instance's first contact);
      // any other would be answered with that collector's config and token. Refused before redeeming: nothing changes.
      const enrolls = await this.app.enrollment.opampCollector(credential.token);
      if (enrolls !== undefined && enrolls !== known.data.collectorId) {
        throw new InstanceRefused(
          403,
          "permission_denied",
          "This instance_uid belongs to an existing collector, which this enrollment token does not enroll. To re-enroll that collector, mint an enrollment token for it (POST /enrollment-tokens with its collectorId).",
        );
      }
    }
    const grant = await this.app.enrollment.redeemOpamp(credential.token, uid);
    if (!grant) {
      throw new InstanceRefused(401, "unauthenticated", "This enrollment token is not valid for this instance_uid: it is bound to another instance, revoked or expired.");
    }
    let collectorId = grant.collectorId;
    if (collectorId === null) {
      const attrs = attributes(description);
      const collector = await this.app.collectors.create(SYSTEM_ACTOR, {
        name: collectorName(attrs, uid),
        managementMode: "opamp",
        environment: grant.environment ?? attrs.get("deployment.environment.name") ?? attrs.get("deployment.environment") ?? null,
        tags: collectorTags(attrs),
      });
      collectorId = collector.id;
    }
    if (grant.collectorId === null) await this.app.enrollment.bindCollector(grant.tokenId, collectorId);
    if (known?.data.collectorId !== collectorId) await this.remember(uid, collectorId);
    return collectorId;
  }

  private async remember(uid: string, collectorId: string): Promise<void> {
    await this.app.store.write([{ op: "put", collection: INSTANCES, id: uid, data: { collectorId, since: new Date().toISOString() } }]);
  }

  private async exists(collectorId: string): Promise<boolean> {
    return this.app.collectors.get(collectorId).then(() => true, () => false);
  }

  /** Handles one AgentToServer and builds the reply (remote config as shared encoded bytes). */
  private async receive(
    credential: Credential,
    message: AgentToServer,
    ws: ChannelSocket | null,
    log: ChannelRequest["log"],
  ): Promise<{ reply: ServerToAgent; remoteConfig?: Uint8Array }> {
    if (message.instanceUid.length === 0 || message.instanceUid.length > 32) {
      throw new Refused(400, "bad_request", "instance_uid must be 1 to 32 bytes (16 for a UUID).");
    }
    const uid = Buffer.from(message.instanceUid).toString("hex");
    const session = ws ? (ws.data.state as SessionState) : null;
    if (session?.instance && session.instance.uid !== uid) {
      throw new UnauthenticatedError("One OpAMP session speaks for one instance_uid.");
    }
    let instance = session?.instance ?? null;
    let fullState = false;
    const newSession = session !== null && session.instance === null;
    if (instance === null) {
      // Each HTTP request and each new session proves its credential for this instance.
      const cached = this.instances.get(uid);
      const collectorId =
        credential.kind === "collector" && cached?.collectorId === credential.collectorId
          ? cached.collectorId
          : await this.locked(uid, () => this.resolveCollector(credential, uid, message.agentDescription));
      if (cached && cached.collectorId === collectorId) {
        instance = cached;
        fullState = isGap(cached, message);
      } else {
        // Unknown here (new, or this server restarted): ask for everything unless this is it.
        fullState = !message.agentDescription;
        instance = {
          uid,
          collectorId,
          lastSeq: message.sequenceNum,
          capabilities: message.capabilities,
          reportedHash: null,
          sentHash: null,
          sentSettings: null,
          healthy: undefined,
          healthError: null,
          configError: null,
          socket: null,
          seenAt: 0,
          pollSeconds: DEFAULT_HEARTBEAT_SECONDS,
          awaitingReport: false,
        };
        this.instances.set(uid, instance);
      }
    } else {
      fullState = isGap(instance, message);
    }
    if (session && !session.instance) {
      session.instance = instance;
      instance.socket = ws;
      instance.sentHash = null;
      instance.sentSettings = null;
      let set = this.byCollector.get(instance.collectorId);
      if (!set) this.byCollector.set(instance.collectorId, (set = new Set()));
      set.add(instance);
      // Deleting the collector the session turned out to be ends it too.
      session.hold?.standOn(`${COLLECTORS}/${instance.collectorId}`);
    }
    instance.lastSeq = message.sequenceNum;
    instance.capabilities = message.capabilities;
    const now = Date.now();
    const gap = Math.round((now - instance.seenAt) / 1000);
    if (instance.socket === null && instance.seenAt > 0 && gap >= DEFAULT_HEARTBEAT_SECONDS) instance.pollSeconds = Math.min(gap, MAX_POLL_SECONDS);
    instance.seenAt = now;
    const collectorId = instance.collectorId;
    if (message.agentDescription) {
      // A full report: the agent may have restarted and lost what it was sent.
      instance.sentHash = null;
      instance.sentSettings = null;
      const version = attributes(message.agentDescription).get("service.version")?.trim().slice(0, 64);
      if (version) background(log, this.app.collectors.reportVersion(SYSTEM_ACTOR, collectorId, version));
    }
    instance.awaitingReport = false;
    const status = message.remoteConfigStatus;
    const reportsConfig =
      status !== undefined && status.lastRemoteConfigHash.length > 0 && status.status !== RemoteConfigStatuses.RemoteConfigStatuses_UNSET;
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
      instance.healthError = message.health.lastError ? await this.app.rollouts.redact(collectorId, message.health.lastError) : null;
    }
    if (reportsConfig) {
      const hash = Buffer.from(status.lastRemoteConfigHash).toString("hex");
      instance.reportedHash = hash;
      const state =
        status.status === RemoteConfigStatuses.RemoteConfigStatuses_APPLIED ? "applied"
        : status.status === RemoteConfigStatuses.RemoteConfigStatuses_APPLYING ? "applying"
        : "failed";
      const error = state === "failed" && status.errorMessage ? await this.app.rollouts.redact(collectorId, status.errorMessage) : "";
      instance.configError = state === "failed" ? error || "the collector could not apply the config" : state === "applied" ? null : instance.configError;
      background(log, this.app.rollouts.report(collectorId, { hash, state, ...(state === "failed" ? { error } : {}) }));
    }
    if (message.effectiveConfig?.configMap) {
      const files = Object.entries(message.effectiveConfig.configMap.configMap).map(([name, file]) => ({
        name,
        contentType: file.contentType,
        body: new TextDecoder().decode(file.body),
      }));
      background(log, this.app.rollouts.setEffective(collectorId, files));
    }
    if (message.agentDisconnect) {
      background(log, this.app.presence.gone(collectorId));
    } else {
      // The operator's interval when offered; an HTTP agent's own cadence otherwise; opamp-go's default on WebSocket.
      const offered = has(instance.capabilities, AgentCapabilities.AgentCapabilities_ReportsHeartbeat) ? this.offeredHeartbeat : null;
      const interval = offered ?? (instance.socket === null ? instance.pollSeconds : DEFAULT_HEARTBEAT_SECONDS);
      background(
        log,
        this.app.presence.seen(collectorId, {
          channel: "opamp",
          intervalSeconds: interval,
          acceptsRemoteConfig: has(instance.capabilities, AgentCapabilities.AgentCapabilities_AcceptsRemoteConfig),
          ...(instance.healthy !== undefined ? { healthy: instance.healthy } : {}),
          error: instance.configError ?? instance.healthError,
        }),
      );
    }

    const reply = serverToAgent({
      instanceUid: message.instanceUid,
      capabilities: SERVER_CAPABILITIES,
      flags: fullState ? REPORT_FULL_STATE : 0n,
    });
    const settings = await this.connectionSettings(instance, credential);
    if (settings) reply.connectionSettings = settings;
    return { reply, remoteConfig: await this.remoteConfigFor(instance, log) };
  }

  /**
   * The encoded AgentRemoteConfig when the agent takes remote config and runs
   * (or was sent) another hash: the delivered body, secrets in, under the hash
   * of the redacted rendering. None while a secret it names cannot be opened
   * (the rollout records and logs that); a later message tries again.
   */
  private async remoteConfigFor(instance: Instance, log: ChannelRequest["log"]): Promise<Uint8Array | undefined> {
    if (instance.awaitingReport || !has(instance.capabilities, AgentCapabilities.AgentCapabilities_AcceptsRemoteConfig)) return undefined;
    const target = await this.app.rollouts.target(instance.collectorId);
    if (!target) return undefined;
    const hash = target.rendered.hash;
    if (hash === instance.reportedHash || hash === instance.sentHash) return undefined;
    // Claimed before the vault is read, so a push and a reply in between do not both send it.
    instance.sentHash = hash;
    const body = await this.app.rollouts.delivered(instance.collectorId, target.rendered);
    if (body === null) {
      if (instance.sentHash === hash) instance.sentHash = null;
      return undefined;
    }
    background(log, this.app.rollouts.fetched(instance.collectorId, hash));
    return this.configs.get(hash, body, yamlType(target.rendered.contentType));
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
  private async connectionSettings(instance: Instance, credential: Credential): Promise<ConnectionSettingsOffers | undefined> {
    const caps = instance.capabilities;
    const offers: { opamp?: ConnectionSettingsOffers["opamp"]; ownMetrics?: ConnectionSettingsOffers["ownMetrics"] } = {};
    const wantsMetrics = has(caps, AgentCapabilities.AgentCapabilities_ReportsOwnMetrics) && this.app.config.externalUrl !== "";
    const wantsOpamp = has(caps, AgentCapabilities.AgentCapabilities_AcceptsOpAMPConnectionSettings);
    const heartbeat = has(caps, AgentCapabilities.AgentCapabilities_ReportsHeartbeat);
    const token = wantsMetrics || wantsOpamp ? await this.tokenToOffer(instance.collectorId, credential, wantsMetrics) : undefined;
    const auth = token !== undefined ? { headers: [{ key: "Authorization", value: `Bearer ${token}` }] } : undefined;
    const headers = auth && create(HeadersSchema, { headers: auth.headers.map((h) => create(HeaderSchema, h)) });
    const offered = this.offeredHeartbeat;
    if ((heartbeat && offered !== null) || (wantsOpamp && headers)) {
      offers.opamp = create(OpAMPConnectionSettingsSchema, {
        destinationEndpoint: wantsOpamp && headers ? opampEndpoint(this.app.config.externalUrl) : "",
        // Unset by the operator: opamp-go's WebSocket default (0 would turn its heartbeats off), and 0 over
        // HTTP, which opamp-go refuses as a polling interval, so the agent keeps its own.
        heartbeatIntervalSeconds: !heartbeat ? 0n : BigInt(offered ?? (instance.socket === null ? 0 : DEFAULT_HEARTBEAT_SECONDS)),
        ...(wantsOpamp && headers ? { headers } : {}),
      });
    }
    if (wantsMetrics && headers) {
      offers.ownMetrics = create(TelemetryConnectionSettingsSchema, { destinationEndpoint: `${this.app.config.externalUrl}/v1/metrics`, headers });
    }
    if (!offers.opamp && !offers.ownMetrics) return undefined;
    const digest = createHash("sha256")
      .update(JSON.stringify([offers.opamp?.destinationEndpoint, String(offers.opamp?.heartbeatIntervalSeconds), token ?? null, !!offers.ownMetrics, !!offers.opamp?.headers]))
      .digest();
    const key = digest.toString("hex");
    if (instance.sentSettings === key) return undefined;
    // A token is about to go out: the enrollment token that opened the exchange must still be valid this moment.
    if (token !== undefined && credential.kind === "enrollment" && !(await this.stillValid(credential))) {
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
    if (credential.collectorId !== collectorId || (await this.app.collectorTokens.verify(credential.token)) !== collectorId) {
      throw new Refused(401, "unauthenticated", ENDED.revoked);
    }
    return credential.token;
  }

  /**
   * The collector's current token, opened from the store; minted (as
   * SYSTEM_ACTOR) only when it has none and `mint` says an offer needs one.
   * One sealed under a key this server lacks is not replaced: the collector
   * keeps the token it holds, which still works, and the error is logged.
   */
  private async collectorToken(collectorId: string, mint: boolean): Promise<string | undefined> {
    try {
      const stored = await this.app.collectorTokens.current(collectorId);
      if (stored !== null) return stored;
    } catch (error) {
      // Said once per collector until its token changes, not on every message of every session.
      if (!this.unopenable.has(collectorId)) {
        this.unopenable.add(collectorId);
        this.app.logger.error(
          { err: error, collectorId, keyId: this.app.secrets.keyId },
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
    return this.locked(`token:${collectorId}`, async () => {
      this.minting.add(collectorId);
      try {
        const known = await this.app.collectorTokens.current(collectorId);
        if (known !== null) return known;
        const { token } = await this.app.collectorTokens.mint(SYSTEM_ACTOR, collectorId);
        return token;
      } catch (error) {
        // Another replica minted it at the same moment: offer that one.
        if (error instanceof ConflictError) return (await this.app.collectorTokens.current(collectorId).catch(() => null)) ?? undefined;
        this.app.logger.warn({ err: error, collectorId }, "opamp: minting the collector token failed");
        return undefined;
      } finally {
        this.minting.delete(collectorId);
      }
    });
  }

  /** Sends a collector's connected sessions its new target, if they have not got it. */
  private async pushConfig(collectorId: string): Promise<void> {
    for (const instance of this.byCollector.get(collectorId) ?? []) {
      const ws = instance.socket;
      if (!ws || (ws.data.state as SessionState).hold?.ended) continue;
      try {
        const remoteConfig = await this.remoteConfigFor(instance, this.app.logger);
        if (!remoteConfig || instance.socket !== ws) continue;
        const reply = serverToAgent({ instanceUid: Buffer.from(instance.uid, "hex"), capabilities: SERVER_CAPABILITIES });
        sendBounded(ws, frame(encodeServerToAgent(reply, remoteConfig)));
      } catch (error) {
        this.app.logger.warn({ err: error, collectorId }, "opamp: pushing the config failed");
      }
    }
  }

  /**
   * Sends a collector's connected sessions new connection settings (its token
   * was rotated): those opened with an enrollment token that is still valid
   * get the new token; those opened with the old token are closed instead.
   */
  private async pushSettings(collectorId: string): Promise<void> {
    for (const instance of [...(this.byCollector.get(collectorId) ?? [])]) {
      const ws = instance.socket;
      if (!ws) continue;
      const state = ws.data.state as SessionState;
      if (state.closed || state.hold?.ended) continue;
      let settings: ConnectionSettingsOffers | undefined;
      try {
        settings = await this.connectionSettings(instance, state.credential);
      } catch (error) {
        if (error instanceof Refused) this.refuse(ws, 1008, error.message);
        else this.app.logger.warn({ err: error, collectorId }, "opamp: pushing connection settings failed");
        continue;
      }
      if (!settings || instance.socket !== ws || state.closed) continue;
      const reply = serverToAgent({ instanceUid: Buffer.from(instance.uid, "hex"), capabilities: SERVER_CAPABILITIES, connectionSettings: settings });
      sendBounded(ws, frame(encodeServerToAgent(reply)));
    }
  }
}

/** The documents a credential stands on: its token's digest, and a collector token's collector. */
function standsOn(credential: Credential): LiveCredential {
  if (credential.kind === "collector") return { standsOn: [tokenDoc(credential.token), `${COLLECTORS}/${credential.collectorId}`] };
  return { standsOn: [tokenDoc(credential.token)], endsAt: credential.expiresAt };
}

/** A sequence_num that does not follow the last one, on a message that is not itself a full report. */
function isGap(instance: Instance, message: AgentToServer): boolean {
  return message.sequenceNum !== instance.lastSeq + 1n && !message.agentDescription;
}

function background(log: ChannelRequest["log"], work: Promise<unknown>): void {
  work.catch((error) => log.warn({ err: error }, "opamp: background update failed"));
}

function yamlType(contentType: string): string {
  return /ya?ml/i.test(contentType) ? "text/yaml" : contentType;
}

/** The ws(s) URL of this endpoint under externalUrl, or "" when it is not set. */
export function opampEndpoint(externalUrl: string): string {
  return externalUrl === "" ? "" : externalUrl.replace(/^http/, "ws") + OPAMP_PATH;
}

/** String attributes of an AgentDescription, identifying ones first. */
export function attributes(description: AgentDescription | undefined): Map<string, string> {
  const out = new Map<string, string>();
  const add = (list: KeyValue[]) => {
    for (const kv of list) {
      const v = kv.value?.value;
      if (v && (v.case === "stringValue" || v.case === "intValue" || v.case === "boolValue" || v.case === "doubleValue") && !out.has(kv.key)) {
        out.set(kv.key, String(v.value));
      }
    }
  };
  add(description?.identifyingAttributes ?? []);
  add(description?.nonIdentifyingAttributes ?? []);
  return out;
}

export function collectorName(attrs: Map<string, string>, uid: string): string {
  for (const key of ["service.instance.id", "host.name", "service.name"]) {
    const value = attrs.get(key)?.trim();
    if (value) return value.slice(0, 200);
  }
  return `opamp-${uid.slice(0, 12)}`;
}

const TAG_KEYS = ["os.type", "host.arch", "service.name", "service.version"];

/** A few descriptive attributes as tags, kept small. */
export function collectorTags(attrs: Map<string, string>): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const key of TAG_KEYS) {
    const value = attrs.get(key);
    if (value) tags[key] = value.slice(0, 64);
  }
  return tags;
}
