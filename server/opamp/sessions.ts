/**
 * What this process knows of OpAMP agents: the instances it has heard from
 * (across WebSocket sessions and HTTP polls), the open sessions per
 * collector for pushes, the idle sweep, and the sessions refused for their
 * instance that are held open before their close.
 *
 * A session whose credential does not speak for its instance (an enrollment
 * token bound to another instance, as on a cloned VM image) is told so and
 * held open, unheard, for `refusedHoldSeconds` before it is closed: opamp-go
 * redials at once after a session ends and ignores ServerErrorResponse, so an
 * early close would be a reconnect storm. An HTTP report refused as too large
 * has no session to hold: its instance is not asked for its full state (which
 * would send the same report again) until the same hold time is over.
 */
import { create } from "@bufbuild/protobuf";
import type { LiveHold } from "../auth/live.ts";
import { RetryInfoSchema, ServerErrorResponseSchema, ServerErrorResponseType, type ServerToAgent } from "../gen/opamp/v1/opamp_pb.ts";
import type { Connection } from "./connection.ts";
import type { Credential } from "./credential.ts";
import type { SeqStreams } from "./seq-streams.ts";
import { SERVER_CAPABILITIES, serverToAgent } from "./wire.ts";

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

/** What this process knows of one agent instance, across sessions and polls. */
export interface Instance {
  uid: string;
  collectorId: string;
  lastSeq: bigint;
  capabilities: bigint;
  /** The config hash the agent last reported, and the one last sent to it (with `#<retries>` once retried, handler.ts). */
  reportedHash: string | null;
  sentHash: string | null;
  /** Hash of the connection settings last offered. */
  sentSettings: string | null;
  healthy: boolean | undefined;
  healthError: string | null;
  configError: string | null;
  /** Its open WebSocket session; null for an HTTP agent. */
  session: Session | null;
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
  /** An effective config it sent was not looked at (over its rate, Delivery.setEffective): asked for again once welcome. */
  effectiveSkipped: boolean;
  /** The hash (hex) of the available components known to be stored for it (collectors/builds.ts). */
  componentsHash: string | null;
  /** The sequence numbers of its HTTP exchanges, which tell clones apart (seq-streams.ts); null until one comes. */
  streams: SeqStreams | null;
}

/**
 * One agent connection: a WebSocket session, kept here while it is open, or
 * one HTTP exchange, which is not (nothing can be pushed to it).
 */
export interface Session {
  readonly connection: Connection;
  readonly credential: Credential;
  /** Ends the session when its credential ends (registered at open). */
  hold: LiveHold | null;
  instance: Instance | null;
  /** Messages are handled one at a time, in order. */
  queue: Promise<void>;
  closed: boolean;
  /** The instance UID (hex) this server told the session's agent to take, as a clone of another live one. */
  reassignedUid: string | null;
}

/** A session over `connection`, speaking for no instance until its first message. */
export function newSession(connection: Connection, credential: Credential): Session {
  return { connection, credential, hold: null, instance: null, queue: Promise.resolve(), closed: false, reassignedUid: null };
}

export interface SessionLimits {
  idleInstanceSeconds?: number;
  /** How long a session refused for its instance is held before its close (REFUSED_HOLD_SECONDS). */
  refusedHoldSeconds?: number;
  maxHeldSessions?: number;
}

export class Sessions {
  private readonly open = new Set<Session>();
  private readonly instances = new Map<string, Instance>();
  /** Open WebSocket instances per collector, for pushes. */
  private readonly byCollector = new Map<string, Set<Instance>>();
  /** Refused sessions held open → when to close them, oldest first (one hold time for all, so insertion order is deadline order). */
  private readonly held = new Map<Session, { at: number; reason: string }>();
  /** HTTP reports refused as too large, by instance UID and credential (reportHoldKey) → until when full state is not asked for. */
  private readonly reportHolds = new Map<string, number>();
  private holdTimer: Timer | null = null;
  private sweeper: Timer | null = null;

  constructor(private readonly limits: SessionLimits = {}) {}

  /** Starts the idle sweep. */
  start(): void {
    const idleMs = (this.limits.idleInstanceSeconds ?? IDLE_INSTANCE_SECONDS) * 1000;
    this.sweeper = setInterval(() => this.forgetIdle(Date.now() - idleMs), Math.min(idleMs, 60_000));
    this.sweeper.unref();
  }

  /** Stops the timers and closes every session. */
  stop(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    if (this.holdTimer) clearTimeout(this.holdTimer);
    this.held.clear();
    this.reportHolds.clear();
    for (const session of this.open) session.connection.close(1001, "server shutting down");
    this.open.clear();
  }

  /** Open sessions, held ones included. */
  get size(): number {
    return this.open.size;
  }

  /** Instances this process remembers (sessions and recent HTTP pollers). */
  get instanceCount(): number {
    return this.instances.size;
  }

  /** Refused sessions being held open. */
  get heldCount(): number {
    return this.held.size;
  }

  get holdSeconds(): number {
    return this.limits.refusedHoldSeconds ?? REFUSED_HOLD_SECONDS;
  }

  opened(session: Session): void {
    this.open.add(session);
  }

  /** The session ended (its socket closed): it no longer speaks for its instance. */
  closed(session: Session): void {
    session.closed = true;
    session.hold?.release();
    this.open.delete(session);
    this.held.delete(session);
    const instance = session.instance;
    if (instance && instance.session === session) {
      instance.session = null;
      const set = this.byCollector.get(instance.collectorId);
      set?.delete(instance);
      if (set?.size === 0) this.byCollector.delete(instance.collectorId);
    }
  }

  instance(uid: string): Instance | undefined {
    return this.instances.get(uid);
  }

  remember(instance: Instance): void {
    this.instances.set(instance.uid, instance);
  }

  /** The session speaks for `instance` from now on; what was sent over an earlier one is not known to have arrived. */
  attach(session: Session, instance: Instance): void {
    session.instance = instance;
    instance.session = session;
    instance.sentHash = null;
    instance.sentSettings = null;
    let set = this.byCollector.get(instance.collectorId);
    if (!set) this.byCollector.set(instance.collectorId, (set = new Set()));
    set.add(instance);
  }

  /** Instances with an open session, per collector (live: pushes see sessions that close meanwhile go). */
  connected(collectorId: string): ReadonlySet<Instance> {
    return this.byCollector.get(collectorId) ?? new Set();
  }

  /** Collectors with an open session. */
  collectors(): IterableIterator<string> {
    return this.byCollector.keys();
  }

  hasCollector(collectorId: string): boolean {
    return this.byCollector.has(collectorId);
  }

  refuse(session: Session, code: number, reason: string): void {
    session.closed = true;
    session.connection.close(code, reason);
  }

  /**
   * Tells a session it is refused: its credential does not speak for its
   * instance, or its message is over the size limit (ServerErrorResponse
   * UNAVAILABLE with RetryInfo, for clients that honour it), then ignores it
   * until the hold time is up and closes it with 1008.
   * opamp-go redials at once when a session ends, so this keeps such a client
   * to one session per hold time; a held socket costs one map entry and
   * shares one timer.
   */
  hold(session: Session, instanceUid: Uint8Array, reason: string): void {
    session.closed = true;
    if (this.held.size >= (this.limits.maxHeldSessions ?? MAX_HELD_SESSIONS)) return void session.connection.close(1008, reason.slice(0, 120));
    session.connection.send(this.unavailable(instanceUid, reason));
    this.held.set(session, { at: Date.now() + this.holdSeconds * 1000, reason: reason.slice(0, 120) });
    if (!this.holdTimer) this.scheduleHeldCloses();
  }

  /** ServerErrorResponse UNAVAILABLE with RetryInfo: the hold time. */
  unavailable(instanceUid: Uint8Array, reason: string): ServerToAgent {
    return serverToAgent({
      instanceUid,
      capabilities: SERVER_CAPABILITIES,
      errorResponse: create(ServerErrorResponseSchema, {
        type: ServerErrorResponseType.ServerErrorResponseType_Unavailable,
        errorMessage: reason,
        Details: { case: "retryInfo", value: create(RetryInfoSchema, { retryAfterNanoseconds: BigInt(Math.round(this.holdSeconds * 1e9)) }) },
      }),
    });
  }

  /**
   * An HTTP report from `uid` (hex) was refused as too large: its full state
   * is not asked for until the hold time is over, then once (reportHold).
   * Keyed by the credential too, so no one else's requests hold it. Past
   * maxHeldSessions nothing is held.
   */
  holdReports(uid: string, credential: Credential): void {
    if (this.reportHolds.size >= (this.limits.maxHeldSessions ?? MAX_HELD_SESSIONS)) return;
    const key = reportHoldKey(uid, credential);
    this.reportHolds.delete(key);
    this.reportHolds.set(key, Date.now() + this.holdSeconds * 1000);
  }

  /** For an HTTP exchange: "held" while a refused report's hold lasts, "due" once after it (ask for full state), else null. */
  reportHold(uid: string, credential: Credential): "held" | "due" | null {
    const key = reportHoldKey(uid, credential);
    const until = this.reportHolds.get(key);
    if (until === undefined) return null;
    if (Date.now() < until) return "held";
    this.reportHolds.delete(key);
    return "due";
  }

  /** Closes the held sessions that are due, then sleeps until the next one is. */
  private scheduleHeldCloses(): void {
    const now = Date.now();
    for (const [session, { at, reason }] of this.held) {
      if (at > now) {
        this.holdTimer = setTimeout(() => this.scheduleHeldCloses(), at - now);
        this.holdTimer.unref();
        return;
      }
      this.held.delete(session);
      session.connection.close(1008, reason);
    }
    this.holdTimer = null;
  }

  /** Drops instances with no open session that sent nothing since `before` (ms), and report holds over since then. */
  private forgetIdle(before: number): void {
    for (const [uid, instance] of this.instances) {
      if (instance.session === null && instance.seenAt < before) this.instances.delete(uid);
    }
    for (const [key, until] of this.reportHolds) {
      if (until < before) this.reportHolds.delete(key);
    }
  }
}

function reportHoldKey(uid: string, credential: Credential): string {
  return `${uid} ${credential.token}`;
}
