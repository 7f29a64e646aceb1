/**
 * The OpAMP server (`/v1/opamp`, docs/architecture.md "OpAMP") for Runtime O collectors,
 * over WebSocket (varint header 0 + protobuf per frame) and plain HTTP POST:
 * the transport, as opamp-go's server/serverimpl.go. It checks the method,
 * TLS and load, authenticates (credential.ts), reads messages, hands each to
 * the message handler (handler.ts) and sends the reply over the connection
 * it came by (connection.ts, which frames it per transport); sessions.ts keeps the
 * instances and sessions, identity.ts maps instances to collectors,
 * settings.ts makes connection settings offers.
 *
 * - Overload is refused, not queued: past `opamp.maxConnections` sessions or
 *   `opamp.maxConcurrentRequests` requests in flight the answer is 503 with a
 *   jittered Retry-After, before auth touches the store. A session whose
 *   collector stops reading is closed (1013), not buffered for; it is sent its
 *   config again when it reconnects. A message over the size limit is
 *   answered UNAVAILABLE with a retry-after and its session held, then
 *   closed (sessions.ts hold), so the agent does not redial with it at once;
 *   over HTTP the same answer, and its full state is not asked for until the
 *   hold time is over (tooLarge).
 * - A session lasts only as long as its credential (server/auth/live.ts):
 *   rotating a collector token, revoking or expiring the enrollment token,
 *   or deleting the collector closes (1008) every session that stands on it,
 *   on every replica, and each message re-checks the credential first.
 * - A publish reaches connected WebSocket sessions at once (Delivery's
 *   onTargetChanged, fed by the store's change feed), one collector at a
 *   time so the event loop keeps answering (push-queue.ts); HTTP agents get
 *   it in the reply to their next poll.
 * - Answers are gzipped for HTTP requests that accept it (connection.ts);
 *   WebSocket frames use permessage-deflate when negotiated.
 */
import { fromBinary } from "@bufbuild/protobuf";
import type { Logger } from "pino";
import { ENDED, type LiveCredentials } from "../auth/live.ts";
import type { CollectorCredential, CollectorTokens } from "../collectors/tokens.ts";
import type { ServerConfig } from "../config/load.ts";
import { AppError, UnavailableError } from "../errors.ts";
import { AgentToServerSchema, type AgentToServer } from "../gen/opamp/v1/opamp_pb.ts";
import type { Channel, ChannelHealth, ChannelRequest, ChannelSocket } from "../channel/channel.ts";
import type { Delivery } from "../rollout/delivery.ts";
import { RESTART_REQUESTS } from "../collectors/restarts.ts";
import type { Store } from "../store/store.ts";
import { channelCredential } from "../channel/credential.ts";
import { authenticate, InstanceRefused, standsOn, stillValid, type Credential } from "./credential.ts";
import { MessageHandler, type HandlerDeps, type HandlerOptions } from "./handler.ts";
import { HttpConnection, socketConnection } from "./connection.ts";
import { newSession, Sessions, type Session, type SessionLimits } from "./sessions.ts";
import { PushQueue } from "./push-queue.ts";
import { instanceUidOf, OPAMP_PATH, readProtobufBody, unframe } from "./wire.ts";

export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/** What the OpAMP channel needs of the server. */
export type OpampDeps = HandlerDeps & {
  store: Pick<Store, "watch">;
  config: { opamp: Pick<ServerConfig["opamp"], "maxConnections" | "maxConcurrentRequests"> };
  collectorTokens: Pick<CollectorTokens, "onRotate">;
  metricsTokens: Pick<CollectorTokens, "onRotate">;
  /** What it may ask of the rollout (rollout/delivery.ts); the handler asks the rest. */
  delivery: Delivery;
  live: Pick<LiveCredentials, "register">;
};

export interface OpampOptions extends HandlerOptions, SessionLimits {
  maxMessageBytes?: number;
  /** Defaults from the server config (`opamp.*`). */
  maxConnections?: number;
  maxConcurrentRequests?: number;
}

/** 503 with a Retry-After spread over [min, max) seconds, so refused agents do not return together. */
function overloaded(message: string, min: number, max: number): UnavailableError {
  return new UnavailableError(message, min + Math.floor(Math.random() * (max - min)), "overloaded");
}

export class OpampChannel implements Channel {
  readonly name = "opamp";
  readonly path = OPAMP_PATH;
  private readonly sessions: Sessions;
  private readonly handler: MessageHandler;
  /** New targets to push to connected sessions, one collector at a time (push-queue.ts). */
  private readonly pushes: PushQueue;
  private readonly unsubscribe: (() => void)[] = [];
  /** Requests being handled (HTTP polls, and upgrades until they open). */
  private inFlight = 0;

  constructor(
    private readonly deps: OpampDeps,
    private readonly options: OpampOptions = {},
  ) {
    this.sessions = new Sessions(options);
    this.handler = new MessageHandler(deps, this.sessions, options);
    this.pushes = new PushQueue((id) => this.handler.pushConfig(id));
  }

  /** Starts the idle sweep and the pushes: new targets, and rotated tokens. */
  start(): void {
    this.sessions.start();
    this.unsubscribe.push(
      // Publishes may have been missed when any may have changed: re-check every connected collector's target (pushConfig sends only a changed one).
      // A target whose state alone moved (outdated, applying, current) offers nothing new: no check, no read.
      this.deps.delivery.onTargetChanged((collectorId, offerChanged) => {
        if (collectorId === undefined) for (const id of [...this.sessions.collectors()]) this.pushes.add(id);
        else if (offerChanged && this.sessions.hasCollector(collectorId)) this.pushes.add(collectorId);
      }),
      // A restart asked for on any replica: sent by the one that holds the collector's session.
      this.deps.store.watch((changes) => {
        for (const c of changes) {
          if (c.collection === RESTART_REQUESTS && c.op === "put") void this.handler.restartRequested(c.id);
        }
      }),
      // A token rotated here or on another replica (the API's otlp-token or metrics-token, or a mint for an offer): its sessions get the new one.
      this.deps.collectorTokens.onRotate((collectorId) => this.rotated("control", collectorId)),
      this.deps.metricsTokens.onRotate((collectorId) => this.rotated("metrics", collectorId)),
    );
  }

  /** A collector's credential was rotated: its sessions are offered the new one, unless an offer minted it here and carries it. */
  private rotated(credential: CollectorCredential, collectorId: string): void {
    if (this.handler.settings.rotated(credential, collectorId) && this.sessions.hasCollector(collectorId))
      queueMicrotask(() => void this.handler.pushSettings(collectorId));
  }

  stop(): void {
    for (const off of this.unsubscribe.splice(0)) off();
    this.pushes.clear();
    this.sessions.stop();
  }

  health(): ChannelHealth {
    return { state: "up", connections: this.sessions.size };
  }

  /** Instances this process remembers (sessions and recent HTTP pollers). */
  get instanceCount(): number {
    return this.sessions.instanceCount;
  }

  /** Refused sessions being held open. */
  get heldCount(): number {
    return this.sessions.heldCount;
  }

  async handle(ctx: ChannelRequest): Promise<Response | undefined> {
    const { req } = ctx;
    const upgrade = req.headers.get("upgrade")?.toLowerCase() === "websocket";
    if (!(req.method === "POST" || (req.method === "GET" && upgrade))) {
      throw new AppError(405, "method_not_allowed", "OpAMP takes a WebSocket upgrade (GET) or a protobuf POST.", [], { Allow: "GET, POST" });
    }
    const presented = channelCredential(ctx, "tls");
    if (!presented.ok && presented.refused === "plaintext") {
      throw new AppError(
        403,
        "tls_required",
        "OpAMP carries Bearer tokens: connect over TLS (wss:// or https://), through a trusted TLS proxy, or from loopback.",
      );
    }
    const limits = this.deps.config.opamp;
    if (upgrade && this.sessions.size >= (this.options.maxConnections ?? limits.maxConnections)) {
      throw overloaded("This server holds as many OpAMP sessions as it is configured for; retry later or connect to another replica.", 10, 40);
    }
    if (this.inFlight >= (this.options.maxConcurrentRequests ?? limits.maxConcurrentRequests)) {
      throw overloaded("Too many OpAMP requests are being handled; retry shortly.", 1, 5);
    }
    this.inFlight++;
    try {
      return await this.exchange(ctx, upgrade, presented.ok ? presented.token : null);
    } finally {
      this.inFlight--;
    }
  }

  private async exchange(ctx: ChannelRequest, upgrade: boolean, token: string | null): Promise<Response | undefined> {
    const { req } = ctx;
    const credential = await authenticate(this.deps, token);
    if (upgrade) {
      // The socket's state is the credential until it opens, then its session (see open).
      if (ctx.server.upgrade(req, { data: { channel: this, state: credential } })) return undefined;
      throw new AppError(400, "bad_upgrade", "The WebSocket upgrade failed.");
    }
    const limit = this.options.maxMessageBytes ?? MAX_MESSAGE_BYTES;
    let body: Uint8Array;
    try {
      body = await readProtobufBody(req, limit);
    } catch (error) {
      if (error instanceof AppError && error.status === 413) return this.tooLarge(req, credential, limit);
      throw error;
    }
    let message: AgentToServer;
    try {
      message = fromBinary(AgentToServerSchema, body);
    } catch {
      throw new AppError(400, "bad_request", "The body is not an AgentToServer message.");
    }
    const connection = new HttpConnection(req.headers.get("accept-encoding"));
    await this.reply(newSession(connection, credential), message, ctx.log).catch((error: unknown) => {
      // opamp-go does not retry a 401 (it waits its polling interval); the header says how long asking again is pointless.
      if (error instanceof InstanceRefused) error.headers["Retry-After"] = String(Math.ceil(this.sessions.holdSeconds));
      throw error;
    });
    return connection.response;
  }

  /**
   * An HTTP request over the size limit (an AgentDescription or effective
   * config too large). What opamp-go v0.23.0's HTTP client does with each
   * answer (client/internal/httpsender.go attemptRequest; the spec is
   * open-telemetry/opamp-spec specification.md):
   * - 413, which the spec asks for since "Plain HTTP Message Size Limits"
   *   (b1905ce, 2026-06-02, after its last release v0.18.0): not retried, the
   *   report is dropped; the next poll is a gap, asked for full state, which
   *   sends the report again: one oversized upload per polling interval, and
   *   no way to say when to retry.
   * - 503 or 429 with Retry-After ("Throttling", Plain HTTP Transport):
   *   retried after the Retry-After with the same bytes, forever; the client
   *   sends nothing else meanwhile (no poll, no status) until it restarts.
   * - 200 with ServerErrorResponse UNAVAILABLE and RetryInfo ("Throttling",
   *   WebSocket; any ServerToAgent may carry it): handed to OnError only
   *   (client/internal/receivedprocessor.go), RetryInfo unread, the report
   *   dropped, and the client polls on.
   * So the last, with the retry-after kept here: the instance's full state
   * is not asked for until the hold time is over, then once
   * (Sessions.holdReports); it is answered meanwhile. The instance is the
   * OpAMP-Instance-UID header, which opamp-go sets (httpsender.go
   * prepareRequest; the spec says SHOULD): the body is not read past the limit.
   */
  private tooLarge(req: Request, credential: Credential, limit: number): Response {
    const header = (req.headers.get("opamp-instance-uid") ?? "").replaceAll("-", "").toLowerCase();
    const uid = /^[0-9a-f]{32}$/.test(header) ? header : "";
    if (uid) this.sessions.holdReports(uid, credential);
    const connection = new HttpConnection(req.headers.get("accept-encoding"));
    const reason = `The request is over this server's limit of ${limit} bytes (an AgentDescription or effective config too large); it is not asked for again until the retry-after, then send less.`;
    connection.send(this.sessions.unavailable(Buffer.from(uid, "hex"), reason));
    // The rest of the body is not read: the connection is not reused.
    connection.response.headers.set("Connection", "close");
    return connection.response;
  }

  /** Handles one message and sends the reply over the connection it came by, unless that closed meanwhile. */
  private async reply(session: Session, message: AgentToServer, log: Logger): Promise<void> {
    const { reply, remoteConfig } = await this.handler.receive(session, message, log);
    if (!session.closed) session.connection.send(reply, remoteConfig);
  }

  open(ws: ChannelSocket): void {
    const session = newSession(socketConnection(ws), ws.data.state as Credential);
    ws.data.state = session;
    this.sessions.opened(session);
    session.hold = this.deps.live.register(standsOn(session.credential), (reason) => this.sessions.refuse(session, 1008, reason));
  }

  message(ws: ChannelSocket, data: string | Buffer): void {
    const session = ws.data.state as Session;
    session.queue = session.queue.then(async () => {
      if (session.closed) return;
      if (session.hold?.ended || !(await stillValid(this.deps, session.credential))) return this.sessions.refuse(session, 1008, ENDED.revoked);
      if (session.closed) return;
      if (typeof data === "string") return this.sessions.refuse(session, 1003, "OpAMP frames are binary");
      const limit = this.options.maxMessageBytes ?? MAX_MESSAGE_BYTES;
      if (data.byteLength > limit) {
        // Told to come back later, then held and closed: a plain close is redialled at once by opamp-go,
        // with the same message, for as long as it runs.
        let uid: Uint8Array = new Uint8Array();
        try {
          uid = instanceUidOf(unframe(data));
        } catch {
          // No frame header: answered without an instance_uid.
        }
        return this.sessions.hold(
          session,
          uid,
          `The message is ${data.byteLength} bytes, over this server's limit of ${limit} (an AgentDescription or effective config too large); retry after the hold, with less.`,
        );
      }
      let message: AgentToServer;
      try {
        message = fromBinary(AgentToServerSchema, unframe(data));
      } catch (error) {
        return this.sessions.refuse(session, 1003, (error as Error).message.slice(0, 100));
      }
      try {
        await this.reply(session, message, this.deps.logger);
      } catch (error) {
        if (error instanceof InstanceRefused) return this.sessions.hold(session, message.instanceUid, error.message);
        if (error instanceof AppError) return this.sessions.refuse(session, 1008, error.message.slice(0, 120));
        this.deps.logger.error({ err: error }, "opamp message failed");
        this.sessions.refuse(session, 1011, "internal error");
      }
    });
  }

  close(ws: ChannelSocket): void {
    this.sessions.closed(ws.data.state as Session);
  }
}
