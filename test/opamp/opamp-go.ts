/**
 * Real opamp-go clients for the tests: drives test/peers/opampclient (one
 * process, any number of agents) over its stdin/stdout JSON lines. The
 * protocol is opamp-go's own (redials, backoff, Retry-After, sequence
 * numbers, coalesced reports, AgentIdentification); a test only says what the
 * agent reports and waits for what the library's callbacks tell, each wait
 * with its own deadline naming what it waited for.
 */
import type { Subprocess } from "bun";
import { peer } from "../peers/peers.ts";
import { uuidBytes } from "./helpers.ts";

/** One line the client program writes: a callback of an agent's client, or the outcome of a command. */
export interface GoEvent {
  agent: string;
  event: "connected" | "connectFailed" | "error" | "message" | "log" | "stopped" | "ok" | "fault";
  /** connectFailed, log, fault: the text; error: the ServerErrorResponse's error_message. */
  error?: string;
  /** error: ServerErrorResponseType name, e.g. ServerErrorResponseType_Unavailable. */
  errorType?: string;
  /** error: RetryInfo.retry_after_nanoseconds, when it has one. */
  retryAfterNs?: number;
  /** message: the remote config opamp-go handed to OnMessage. */
  remoteConfig?: { hash: string; body: string };
  /** message: AgentIdentification.new_instance_uid (hex), which opamp-go has already taken. */
  newInstanceUid?: string;
  /** ok, fault: the command it answers. */
  op?: string;
}

export interface Description {
  identifying: Record<string, string>;
  nonIdentifying?: Record<string, string>;
}

export interface AgentOptions {
  /** ws:// or wss:// runs opamp-go's WebSocket client, http:// or https:// its HTTP client. */
  url: string;
  token: string;
  /** 32 hex digits; a fresh UUIDv7 when not given. */
  uid?: string;
  description: Description;
  /** The client's heartbeat (WebSocket) or polling (HTTP) interval; opamp-go's 30 s when not given. */
  heartbeatSeconds?: number;
  /** Report every config it is sent APPLIED at once, as an agent that runs whatever it gets. */
  autoApply?: boolean;
}

type Status = "APPLIED" | "APPLYING" | "FAILED";

const COMMAND_MS = 20_000;

/** The opampclient process: agents are started through it, and its events are fanned out to them. */
export class OpampGo {
  private readonly proc: Subprocess<"pipe", "pipe", "pipe">;
  private readonly agents = new Map<string, GoAgent>();
  private readonly listeners = new Set<(event: GoEvent) => void>();
  /** Commands sent and not yet answered, in order (the program answers each, in order). */
  private readonly pending: { resolve: () => void; reject: (error: Error) => void }[] = [];
  private stderr = "";
  private exited = false;
  private names = 0;

  constructor() {
    const proc = Bun.spawn([peer("opampclient")], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    this.proc = proc;
    void this.read();
    void (async () => {
      for await (const chunk of proc.stderr) this.stderr = (this.stderr + new TextDecoder().decode(chunk)).slice(-4000);
    })();
    void proc.exited.then((code) => {
      this.exited = true;
      for (const waiter of this.pending.splice(0)) waiter.reject(new Error(`opampclient exited (${code}): ${this.stderr}`));
    });
  }

  private async read(): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of this.proc.stdout) {
      buffer += decoder.decode(chunk, { stream: true });
      const lines = buffer.split("\n");
      buffer = lines.pop()!;
      for (const line of lines) {
        if (!line.trim()) continue;
        const event = JSON.parse(line) as GoEvent;
        if (event.event === "ok" || event.event === "fault") {
          const waiter = this.pending.shift();
          if (event.event === "ok") waiter?.resolve();
          else waiter?.reject(new Error(`opampclient ${event.op ?? "command"} for ${event.agent || "?"}: ${event.error}`));
          continue;
        }
        this.agents.get(event.agent)?.record(event);
        for (const listener of this.listeners) listener(event);
      }
    }
  }

  /** Sends one command; resolves once the program has carried it out, fails with its fault or past the deadline. */
  command(fields: Record<string, unknown>): Promise<void> {
    if (this.exited) return Promise.reject(new Error(`opampclient has exited: ${this.stderr}`));
    const done = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`opampclient did not answer ${fields.op} for ${fields.agent} within ${COMMAND_MS} ms`)), COMMAND_MS);
      this.pending.push({ resolve: () => (clearTimeout(timer), resolve()), reject: (e) => (clearTimeout(timer), reject(e)) });
    });
    this.proc.stdin.write(`${JSON.stringify(fields)}\n`);
    this.proc.stdin.flush();
    return done;
  }

  /** Starts an agent's client; resolves once opamp-go's Start returned (not once connected: wait for that). */
  async agent(options: AgentOptions): Promise<GoAgent> {
    const name = `agent-${++this.names}`;
    const uid = options.uid ?? Buffer.from(uuidBytes()).toString("hex");
    const agent = new GoAgent(this, name, uid);
    this.agents.set(name, agent);
    await this.command({
      op: "start",
      agent: name,
      url: options.url,
      token: options.token,
      uid,
      description: { nonIdentifying: {}, ...options.description },
      heartbeatSeconds: options.heartbeatSeconds ?? 0,
      autoApply: options.autoApply ?? false,
    });
    return agent;
  }

  /** Every event of every agent, as it comes (for fleets too large to wait on one by one). */
  onEvent(listener: (event: GoEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Stops every agent (closing stdin) and waits for the program to exit; killed if it has not within 20 s. */
  async close(): Promise<void> {
    if (this.exited) return;
    void this.proc.stdin.end();
    const timer = setTimeout(() => this.proc.kill("SIGKILL"), 20_000);
    await this.proc.exited;
    clearTimeout(timer);
  }

  /** Ends the program at once (its agents vanish without agent_disconnect). */
  async kill(): Promise<void> {
    this.proc.kill("SIGKILL");
    await this.proc.exited;
  }
}

/** One agent: what its opamp-go client reported, in order, and the commands that script it. */
export class GoAgent {
  readonly events: GoEvent[] = [];
  private waiters: { from: number; match: (e: GoEvent) => boolean; resolve: (e: GoEvent) => void }[] = [];

  constructor(
    private readonly client: OpampGo,
    readonly name: string,
    /** The instance UID it speaks with (hex): changes when the server gives it a new one. */
    public uid: string,
  ) {}

  /** @internal Called by OpampGo for each of this agent's events. */
  record(event: GoEvent): void {
    if (event.newInstanceUid) this.uid = event.newInstanceUid;
    const index = this.events.push(event) - 1;
    this.waiters = this.waiters.filter((w) => (index >= w.from && w.match(event) ? (w.resolve(event), false) : true));
  }

  /** Where the events are now: pass to `waitFor` to wait only for later ones. */
  mark(): number {
    return this.events.length;
  }

  /** The first event from index `from` on that matches (one already recorded, or the next); fails naming `what` past `timeoutMs`. */
  waitFor(match: (e: GoEvent) => boolean, what: string, timeoutMs = 15_000, from = 0): Promise<GoEvent> {
    const found = this.events.slice(from).find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        const recent = this.events.slice(-8).map((e) => JSON.stringify({ ...e, remoteConfig: e.remoteConfig && { hash: e.remoteConfig.hash } }));
        reject(new Error(`${this.name} waited ${timeoutMs} ms in vain for ${what}; its last events: ${recent.join(" ")}`));
      }, timeoutMs);
      const waiter = { from, match, resolve: (e: GoEvent) => (clearTimeout(timer), resolve(e)) };
      this.waiters.push(waiter);
    });
  }

  /** The events from `from` on that match. */
  count(match: (e: GoEvent) => boolean, from = 0): number {
    return this.events.slice(from).filter(match).length;
  }

  /** SetAgentDescription. */
  describe(description: Description): Promise<void> {
    return this.client.command({ op: "describe", agent: this.name, description: { nonIdentifying: {}, ...description } });
  }

  /** SetRemoteConfigStatus (opamp-go sends it unless equal to the last one, coalesced with anything else pending). */
  status(hash: string, status: Status = "APPLIED", error = ""): Promise<void> {
    return this.client.command({ op: "status", agent: this.name, hash, status, error });
  }

  /** Stop (a WebSocket client sends agent_disconnect and closes). */
  stop(): Promise<void> {
    return this.client.command({ op: "stop", agent: this.name });
  }

  /** Stop, then a new client with what it kept (UID, description, last status), as a restarted supervisor. */
  restart(url?: string): Promise<void> {
    return this.client.command({ op: "restart", agent: this.name, ...(url ? { url } : {}) });
  }
}

/** ws:// and http:// URLs of a server's OpAMP endpoint, by transport, for tests run over each. */
export function opampUrls(base: string): { ws: string; http: string } {
  return { ws: `${base.replace(/^http/, "ws")}/v1/opamp`, http: `${base}/v1/opamp` };
}

export const TRANSPORTS = ["ws", "http"] as const;
export type Transport = (typeof TRANSPORTS)[number];
