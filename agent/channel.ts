/**
 * The agent's one connection: an outbound WebSocket to the server's
 * `/v1/agent` (docs/architecture.md "Host agent"). It says hello on every session, heartbeats at
 * the interval the server's welcome names, answers the server's requests by
 * id, and reconnects by itself with jittered exponential backoff (1 s doubling
 * to 60 s). A refused credential (401) or transport (403) is logged plainly
 * and retried slowly: an operator has to fix the config, and a fleet of
 * agents must not hammer the server meanwhile.
 */
import { readFileSync } from "node:fs";
import type { Logger } from "./log.ts";
import type { AgentErrorCode, AgentMessage, ServerMessage, ServerRequest } from "../shared/agent-protocol.ts";

export const AGENT_ID_HEADER = "X-Svc-Agent-Id";
export const AGENT_CREDENTIAL_HEADER = "X-Svc-Agent-Credential";
const BASE_DELAY_MS = 1000;
const MAX_DELAY_MS = 60_000;
/** After the server refused the token or the transport. */
const REFUSED_DELAY_MS = 5 * 60_000;
/** A session that lasted this long resets the backoff. */
const STABLE_MS = 60_000;

type Hello = Extract<AgentMessage, { type: "hello" }>;

/** Codes the server maps to HTTP statuses; an error carrying one is answered with it (e.g. agent/browse.ts's). */
const ANSWERABLE: ReadonlySet<string> = new Set<AgentErrorCode>([
  "browse_disabled",
  "outside_allowed_roots",
  "denied_by_pattern",
  "not_found",
  "not_a_directory",
  "not_a_file",
  "special_file",
  "hard_link",
  "permission_denied",
  "bad_request",
]);

function answerable(error: unknown): error is Error & { code: AgentErrorCode } {
  const code = error instanceof Error ? (error as Error & { code?: unknown }).code : undefined;
  return typeof code === "string" && ANSWERABLE.has(code);
}

/** Bun's WebSocket takes headers and TLS options; the DOM typings in scope know only protocols. */
const BunWebSocket = WebSocket as unknown as new (url: string, options: Bun.WebSocketOptions) => WebSocket;

export interface ChannelOptions {
  /** `wss://host/v1/agent` (ws:// only for loopback, checked by the config). */
  url: string;
  token: string;
  agentId: string;
  /** The agent's own credential, once the server issued one (agent/credential.ts). */
  credential?(): string | null;
  /** The server enrolled this agent and sent its credential: keep it. */
  credentialIssued?(credential: string): void;
  caCertPath: string | null;
  insecureSkipVerify: boolean;
  log: Logger;
  hello(): Promise<Hello>;
  /** Called after each hello, e.g. to send the current discovery report. */
  opened?(): void;
  handle(request: ServerRequest): Promise<unknown>;
  /** Tests shorten the delays. */
  delays?: { baseMs?: number; maxMs?: number; refusedMs?: number };
}

export class AgentChannel {
  private ws: WebSocket | null = null;
  private attempts = 0;
  private openedAt = 0;
  private retry: Timer | null = null;
  private heartbeat: Timer | null = null;
  private stopped = true;
  private readonly ca: string | undefined;

  constructor(private readonly options: ChannelOptions) {
    this.ca = options.caCertPath ? readFileSync(options.caCertPath, "utf8") : undefined;
  }

  get connected(): boolean {
    return this.ws?.readyState === WebSocket.OPEN;
  }

  start(): void {
    this.stopped = false;
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.ws?.close(1000, "agent stopping");
    this.ws = null;
  }

  /** Sends when connected; false otherwise (the caller sends again on the next session). */
  send(message: AgentMessage): boolean {
    if (!this.connected) return false;
    this.ws!.send(JSON.stringify(message));
    return true;
  }

  private connect(): void {
    const { url, token, agentId, log, insecureSkipVerify } = this.options;
    if (insecureSkipVerify && url.startsWith("wss:")) {
      log.warn({ url }, "certificates.insecureSkipVerify is set: the server's certificate is NOT verified (lab use only)");
    }
    const credential = this.options.credential?.() ?? null;
    const ws = new BunWebSocket(url, {
      headers: { Authorization: `Bearer ${token}`, [AGENT_ID_HEADER]: agentId, ...(credential !== null ? { [AGENT_CREDENTIAL_HEADER]: credential } : {}) },
      tls: { rejectUnauthorized: !insecureSkipVerify, ...(this.ca !== undefined ? { ca: this.ca } : {}) },
    });
    this.ws = ws;
    let failure: string | null = null;
    ws.onopen = () => {
      this.openedAt = Date.now();
      log.info({ url }, "connected to the server");
      void this.options
        .hello()
        .then((hello) => {
          this.send(hello);
          this.options.opened?.();
        })
        .catch((error) => log.error({ err: error }, "building the hello message failed"));
    };
    ws.onmessage = (event) => this.receive(String(event.data));
    ws.onerror = (event) => {
      failure = (event as ErrorEvent).message ?? "connection failed";
    };
    ws.onclose = (event) => {
      if (this.ws !== ws) return;
      this.ws = null;
      if (this.heartbeat) clearInterval(this.heartbeat);
      this.heartbeat = null;
      if (this.stopped) return;
      this.scheduleRetry(event.code, event.reason, failure);
    };
  }

  private scheduleRetry(code: number, reason: string, failure: string | null): void {
    const { log, url } = this.options;
    const delays = this.options.delays ?? {};
    if (this.openedAt !== 0 && Date.now() - this.openedAt >= STABLE_MS) this.attempts = 0;
    this.openedAt = 0;
    const status = /status code: (\d{3})/.exec(failure ?? "")?.[1];
    let delay: number;
    if (status === "401" || status === "403") {
      delay = delays.refusedMs ?? REFUSED_DELAY_MS;
      log.error(
        { url, status: Number(status), retryInSeconds: Math.round(delay / 1000) },
        status === "401"
          ? "the server refused server.token or this agent's credential: the token is unknown, revoked, not an agent enrollment token, or (for a new host) expired or used up; or this agent id is enrolled and its credential (in agent.stateDir) is missing or wrong, which an operator resolves with POST /agents/{id}/re-enroll"
          : "the server refused this connection: it needs TLS (wss://) from non-loopback agents",
      );
    } else {
      const cap = Math.min(delays.maxMs ?? MAX_DELAY_MS, (delays.baseMs ?? BASE_DELAY_MS) * 2 ** this.attempts);
      // Full jitter within the upper half: agents cut off together come back spread out.
      delay = cap / 2 + Math.random() * (cap / 2);
      this.attempts++;
      log.warn({ url, code, reason: reason || failure, retryInSeconds: Math.round(delay / 100) / 10 }, "disconnected from the server; reconnecting");
    }
    this.retry = setTimeout(() => {
      this.retry = null;
      if (!this.stopped) this.connect();
    }, delay);
  }

  private receive(text: string): void {
    let message: ServerMessage;
    try {
      message = JSON.parse(text) as ServerMessage;
    } catch {
      this.options.log.warn("the server sent a frame that is not JSON");
      return;
    }
    if (message.type === "welcome") {
      if (typeof message.credential === "string") this.options.credentialIssued?.(message.credential);
      if (this.heartbeat) clearInterval(this.heartbeat);
      const seconds = Math.max(5, message.heartbeatSeconds);
      this.heartbeat = setInterval(() => this.send({ type: "heartbeat" }), seconds * 1000);
      return;
    }
    if (!("id" in message) || typeof message.id !== "string") return;
    void this.answer(message);
  }

  private async answer(request: ServerRequest): Promise<void> {
    try {
      const result = await this.options.handle(request);
      this.send({ type: "response", id: request.id, result });
    } catch (error) {
      const known = answerable(error);
      if (!known) this.options.log.error({ err: error, request: request.type }, "answering a server request failed");
      this.send({
        type: "response",
        id: request.id,
        error: { code: known ? error.code : "internal", message: known ? error.message : "the agent failed to answer" },
      });
    }
  }
}
