/**
 * The host-agent channel (`/v1/agent`, docs/architecture.md "Host agent"): a WebSocket the agent
 * opens outbound with its enrollment token as Bearer, its stable id in
 * `X-Svc-Agent-Id` and, once enrolled, its own credential in
 * `X-Svc-Agent-Credential` (registry.ts: an id is bound to it). All are checked
 * before the upgrade, so a refused agent gets a plain 401 it can log, not a
 * socket that closes, and the session it would have replaced stays.
 *
 * JSON text frames, each with a `type`: the agent sends `hello`, `discovery`,
 * `heartbeat` and `response`; the server sends `welcome` and requests
 * (`browse.list`, `browse.sample`, `discovery.rescan`) that the agent answers
 * by `id`. `request()` is the relay the REST API uses, with a timeout.
 *
 * A session lasts only as long as its credential: revoking the enrollment
 * token or removing the agent, on any replica, closes it (CLOSE_REVOKED) and
 * nothing more is relayed or taken from it. The credential is also read
 * again from the store at each heartbeat and before each relayed request.
 */
import type { Logger } from "pino";
import {
  AGENT_ID,
  DiscoverySchema,
  HelloSchema,
  ResponseSchema,
  type AgentErrorCode,
  type ServerMessage,
  type ServerRequest,
} from "../../shared/agent-protocol.ts";
import { ENDED, tokenDoc, type LiveCredentials, type LiveHold } from "../auth/live.ts";
import { tokenKind } from "../auth/tokens.ts";
import { AppError, UnauthenticatedError } from "../errors.ts";
import { assertJsonDepth } from "../lib/body.ts";
import { channelCredential } from "../channel/credential.ts";
import { sendBounded, type Channel, type ChannelHealth, type ChannelRequest, type ChannelSocket } from "../channel/channel.ts";
import { validate } from "../lib/validate.ts";
import { AGENTS, type Agents } from "./registry.ts";

export const AGENT_PATH = "/v1/agent";
export const AGENT_ID_HEADER = "x-svc-agent-id";
export const AGENT_CREDENTIAL_HEADER = "x-svc-agent-credential";
export const HEARTBEAT_SECONDS = 30;
const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/** Close code for a session replaced by a newer one of the same agent. */
export const CLOSE_REPLACED = 4001;
/** Close code (policy violation) for a session whose credential was revoked, or whose agent was removed. */
export const CLOSE_REVOKED = 1008;

interface Session {
  agentId: string;
  /** Whether the credential the session was admitted with still holds, read from the store. */
  stillAdmitted: () => Promise<boolean>;
  environment: string | null;
  /** The documents the session's credential stands on (its token's digest, its agent). */
  standsOn: string[];
  hold: LiveHold | null;
  /** Minted at admission, sent once in the welcome. */
  credential: string | null;
  helloDone: boolean;
  closed: boolean;
}

interface Pending {
  agentId: string;
  resolve(result: unknown): void;
  reject(error: AppError): void;
  timer: Timer;
}

/** How an agent's error code reads over HTTP. */
const ERROR_STATUS: Record<AgentErrorCode, number> = {
  browse_disabled: 403,
  outside_allowed_roots: 403,
  denied_by_pattern: 403,
  permission_denied: 403,
  hard_link: 403,
  not_found: 404,
  not_a_directory: 400,
  not_a_file: 400,
  special_file: 400,
  bad_request: 400,
  internal: 502,
};

/** A request as the relay builds it; request() assigns the id. */
type RequestBody<R = ServerRequest> = R extends ServerRequest ? Omit<R, "id"> : never;

export class AgentChannel implements Channel {
  readonly name = "agents";
  readonly path = AGENT_PATH;
  private readonly sessions = new Map<string, ChannelSocket>();
  private readonly pending = new Map<string, Pending>();
  private nextId = 0;
  private readonly sweeper: Timer;

  constructor(
    private readonly agents: Agents,
    private readonly live: LiveCredentials,
    private readonly log: Logger,
    private readonly heartbeatSeconds = HEARTBEAT_SECONDS,
  ) {
    this.sweeper = setInterval(() => void this.agents.sweep(new Set(this.sessions.keys())).catch(() => {}), 30_000);
    this.sweeper.unref();
  }

  health(): ChannelHealth {
    return { state: "up", connections: this.sessions.size };
  }

  isConnected(agentId: string): boolean {
    return this.sessions.has(agentId);
  }

  /** Ends an agent's session (it was forgotten). */
  disconnect(agentId: string): void {
    this.sessions.get(agentId)?.close(CLOSE_REVOKED, "this agent was removed");
  }

  stop(): void {
    clearInterval(this.sweeper);
    for (const ws of this.sessions.values()) ws.close(1001, "server shutting down");
    this.sessions.clear();
  }

  async handle(ctx: ChannelRequest): Promise<Response | undefined> {
    const { req } = ctx;
    if (req.method !== "GET" || req.headers.get("upgrade")?.toLowerCase() !== "websocket") {
      throw new AppError(426, "upgrade_required", "The agent channel is a WebSocket: connect with wss:// and an upgrade.", [], { Upgrade: "websocket" });
    }
    const credential = channelCredential(ctx, "tls");
    if (!credential.ok && credential.refused === "plaintext") {
      throw new AppError(403, "tls_required", "The agent channel carries a Bearer token: connect with wss://, through a trusted TLS proxy, or from loopback.");
    }
    if (!credential.ok || tokenKind(credential.token) !== "enrollment") {
      throw new UnauthenticatedError("The agent channel needs 'Authorization: Bearer <agent enrollment token>' (server.token in the agent config).");
    }
    const token = credential.token;
    const agentId = req.headers.get(AGENT_ID_HEADER);
    if (agentId === null || !AGENT_ID.test(agentId)) {
      throw new AppError(400, "bad_request", `The upgrade needs an ${AGENT_ID_HEADER} header: 1 to 128 letters, digits, '.', '_' or '-'.`);
    }
    const admission = await this.agents.admit(token, agentId, req.headers.get(AGENT_CREDENTIAL_HEADER));
    if (admission === "token") {
      throw new UnauthenticatedError("The enrollment token is unknown, revoked, not an agent token, or (for a new host) expired or used up.");
    }
    if (admission === "identity") {
      throw new AppError(
        401,
        "agent_credential_required",
        `Agent '${agentId}' is already enrolled and this connection does not carry its credential (${AGENT_CREDENTIAL_HEADER}). If the host lost it, an operator allows a new enrollment with POST /agents/${agentId}/re-enroll, or deletes the host.`,
      );
    }
    const session: Session = {
      agentId,
      stillAdmitted: () => this.agents.stillAdmitted(token, admission.tokenId, agentId),
      environment: admission.environment,
      standsOn: [tokenDoc(token), `${AGENTS}/${agentId}`],
      hold: null,
      credential: admission.credential,
      helloDone: false,
      closed: false,
    };
    if (ctx.server.upgrade(req, { data: { channel: this, state: session } })) return undefined;
    throw new AppError(400, "bad_upgrade", "The WebSocket upgrade failed.");
  }

  open(ws: ChannelSocket): void {
    const session = ws.data.state as Session;
    session.hold = this.live.register({ standsOn: session.standsOn }, (reason) => this.refuse(ws, CLOSE_REVOKED, reason));
    const previous = this.sessions.get(session.agentId);
    this.sessions.set(session.agentId, ws);
    if (previous) previous.close(CLOSE_REPLACED, "replaced by a newer session of this agent");
    const credential = session.credential;
    session.credential = null;
    this.send(ws, { type: "welcome", agentId: session.agentId, heartbeatSeconds: this.heartbeatSeconds, ...(credential !== null ? { credential } : {}) });
  }

  message(ws: ChannelSocket, data: string | Buffer): void {
    const session = ws.data.state as Session;
    if (session.closed || session.hold?.ended) return;
    if (typeof data !== "string") return void this.refuse(ws, 1003, "agent messages are JSON text frames");
    // A UTF-16 length under a third of the cap cannot exceed it in UTF-8; only longer text is measured.
    if (data.length > MAX_MESSAGE_BYTES / 3 && Buffer.byteLength(data, "utf8") > MAX_MESSAGE_BYTES) return void this.refuse(ws, 1009, "message too large");
    try {
      // Bounded like a REST body: deeper JSON parses, but cannot be stored (it would fail the agents' shared write).
      assertJsonDepth(Buffer.from(data, "utf8"), "The message");
    } catch (error) {
      return void this.refuse(ws, 1008, (error as Error).message.slice(0, 120));
    }
    let message: { type?: unknown };
    try {
      message = JSON.parse(data) as { type?: unknown };
    } catch {
      return void this.refuse(ws, 1007, "not JSON");
    }
    try {
      this.dispatch(ws, session, message);
    } catch (error) {
      this.refuse(ws, 1008, (error as Error).message.slice(0, 120));
    }
  }

  close(ws: ChannelSocket): void {
    const session = ws.data.state as Session;
    session.closed = true;
    session.hold?.release();
    if (this.sessions.get(session.agentId) !== ws) return;
    this.sessions.delete(session.agentId);
    for (const [id, p] of this.pending) {
      if (p.agentId !== session.agentId) continue;
      this.pending.delete(id);
      clearTimeout(p.timer);
      p.reject(offline(session.agentId));
    }
    this.background(this.agents.offline(session.agentId));
  }

  /** Sends a request to a connected agent and waits for its answer; agent errors come back as AppErrors. */
  async request(agentId: string, body: RequestBody, timeoutMs = 10_000): Promise<unknown> {
    const ws = this.sessions.get(agentId);
    if (!ws || !(await this.holds(ws)) || this.sessions.get(agentId) !== ws) throw offline(agentId);
    const id = String(++this.nextId);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new AppError(504, "agent_timeout", `Agent '${agentId}' did not answer within ${timeoutMs / 1000} s.`));
      }, timeoutMs);
      this.pending.set(id, { agentId, resolve, reject, timer });
      this.send(ws, { ...body, id } as ServerMessage);
    });
  }

  private dispatch(ws: ChannelSocket, session: Session, message: { type?: unknown }): void {
    switch (message.type) {
      case "hello": {
        const hello = validate(HelloSchema, message, "hello message");
        session.helloDone = true;
        this.background(this.agents.hello(session.agentId, hello, session.environment));
        return;
      }
      case "discovery": {
        if (!session.helloDone) throw new Error("discovery before hello");
        const { report } = validate(DiscoverySchema, message, "discovery message");
        this.background(this.agents.discovered(session.agentId, report));
        return;
      }
      case "heartbeat":
        this.background(this.agents.seen(session.agentId));
        void this.holds(ws);
        return;
      case "response": {
        const response = validate(ResponseSchema, message, "response message");
        const pending = this.pending.get(response.id);
        // Late answers (after a timeout) and answers for another agent's requests are dropped.
        if (!pending || pending.agentId !== session.agentId) return;
        this.pending.delete(response.id);
        clearTimeout(pending.timer);
        if (response.error) pending.reject(agentError(session.agentId, response.error));
        else pending.resolve(response.result);
        return;
      }
      default:
        throw new Error(`unknown message type ${JSON.stringify(message.type)?.slice(0, 40)}`);
    }
  }

  /** Re-checks the session's credential in the store; a session whose credential is gone is closed. */
  private async holds(ws: ChannelSocket): Promise<boolean> {
    const session = ws.data.state as Session;
    if (session.closed || session.hold?.ended) return false;
    let ok: boolean;
    try {
      ok = await session.stillAdmitted();
    } catch (error) {
      // The store cannot answer: the change feed still ends the session if the credential goes.
      this.log.warn({ err: error, agentId: session.agentId }, "agent channel: re-checking the session's credential failed");
      return !session.closed;
    }
    if (!ok) this.refuse(ws, CLOSE_REVOKED, ENDED.revoked);
    return ok && !session.closed;
  }

  private send(ws: ChannelSocket, message: ServerMessage): void {
    sendBounded(ws, JSON.stringify(message));
  }

  private refuse(ws: ChannelSocket, code: number, reason: string): void {
    (ws.data.state as Session).closed = true;
    ws.close(code, reason);
  }

  private background(work: Promise<unknown>): void {
    work.catch((error) => this.log.warn({ err: error }, "agent channel: storing an update failed"));
  }
}

function offline(agentId: string): AppError {
  return new AppError(409, "agent_offline", `Agent '${agentId}' is not connected to this server.`);
}

function agentError(agentId: string, error: { code: string; message: string }): AppError {
  const status = ERROR_STATUS[error.code as AgentErrorCode] ?? 502;
  return new AppError(status, error.code in ERROR_STATUS ? error.code : "agent_error", `Agent '${agentId}': ${error.message}`);
}
