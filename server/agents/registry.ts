/**
 * The host registry: one `agents/<agentId>` document per host agent, with
 * what it last said about its host and what it discovered there.
 *
 * Identity is bound server-side from the enrollment token (DESIGN.md §4): the
 * first connection of an agent id redeems the token (one use) and binds the
 * record to it; later connections with the same token are reconnects and
 * count nothing, even after the token expired or ran out of uses (those limit
 * enrolling new hosts). A revoked token admits nobody. Another live token may
 * re-enroll a host (say, after its config was rewritten); that counts a use
 * and is audited with the token it replaces.
 */
import type { Logger } from "pino";
import type { DiscoveryReport, HostFacts } from "../../agent/types.ts";
import { auditEntry, SYSTEM_ACTOR, type Actor } from "../audit/audit.ts";
import type { Enrollment } from "../enrollment/enrollment.ts";
import { ConflictError, NotFoundError } from "../errors.ts";
import { Coalescer } from "../store/coalesce.ts";
import { scan } from "../store/scan.ts";
import type { Store } from "../store/store.ts";
import type { Hello } from "./schemas.ts";

export const AGENTS = "agents";
export const AGENT_STATUSES = ["online", "offline"] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];

export interface AgentRecord {
  id: string;
  /** The host name from its last hello (the id until then). */
  name: string;
  /** The token's environment when it has one, else the agent's `agent.environment`. */
  environment: string;
  version: string | null;
  tokenId: string;
  status: AgentStatus;
  enrolledAt: string;
  connectedAt: string | null;
  lastSeen: string | null;
  host: HostFacts | null;
  browse: Hello["browse"] | null;
  discovery: DiscoveryReport | null;
  discoveredAt: string | null;
}

export interface Admission {
  agentId: string;
  tokenId: string;
  /** The token's environment, which wins over the one the agent reports. */
  environment: string | null;
}

/** How stale a stored lastSeen may get while the agent keeps calling. */
const LAST_SEEN_RESOLUTION_MS = 60_000;
const OFFLINE_AFTER_HEARTBEATS = 3;

export class Agents {
  private readonly writes: Coalescer<AgentRecord>;
  private readonly written = new Map<string, number>();

  constructor(
    private readonly store: Store,
    private readonly enrollment: Enrollment,
    log: Logger,
    private readonly heartbeatSeconds: number,
  ) {
    this.writes = new Coalescer(store, AGENTS, 200, log);
  }

  /** Whether `token` admits the agent `agentId`: null when it does not (unknown, revoked, or new and not redeemable). */
  async admit(token: string, agentId: string): Promise<Admission | null> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const binding = await this.enrollment.agentToken(token);
      if (!binding) return null;
      const current = await this.store.get<AgentRecord>(AGENTS, agentId);
      if (current?.data.tokenId === binding.tokenId) return { agentId, ...binding };
      const grant = await this.enrollment.redeemAgent(token);
      if (!grant) return null;
      const now = new Date().toISOString();
      const record: AgentRecord = current
        ? { ...current.data, tokenId: grant.tokenId, environment: grant.environment ?? current.data.environment }
        : {
            id: agentId,
            name: agentId,
            environment: grant.environment ?? "production",
            version: null,
            tokenId: grant.tokenId,
            status: "offline",
            enrolledAt: now,
            connectedAt: null,
            lastSeen: null,
            host: null,
            browse: null,
            discovery: null,
            discoveredAt: null,
          };
      const details = { tokenId: grant.tokenId, ...(current ? { previousTokenId: current.data.tokenId } : {}) };
      try {
        await this.store.write(
          [{ op: "put", collection: AGENTS, id: agentId, data: record, expect: current?.version ?? "absent" }],
          [auditEntry(SYSTEM_ACTOR, "agent.enroll", "agent", agentId, details)],
        );
        return { agentId, ...grant };
      } catch (error) {
        // Another session of the same agent enrolled it meanwhile: look again.
        if (!(error instanceof ConflictError)) throw error;
      }
    }
    return null;
  }

  /** A session opened and said hello: the host facts replace the old ones and the agent is online. */
  async hello(agentId: string, hello: Hello, tokenEnvironment: string | null): Promise<void> {
    const now = Date.now();
    this.written.set(agentId, now);
    const at = new Date(now).toISOString();
    await this.writes.update(agentId, (doc) =>
      doc && {
        ...doc,
        name: hello.host.hostname || agentId,
        environment: tokenEnvironment ?? hello.environment,
        version: hello.version,
        status: "online",
        connectedAt: at,
        lastSeen: at,
        host: hello.host,
        browse: hello.browse,
      },
    );
  }

  async discovered(agentId: string, report: DiscoveryReport): Promise<void> {
    const at = new Date().toISOString();
    await this.writes.update(agentId, (doc) => doc && { ...doc, discovery: report, discoveredAt: at, lastSeen: at });
  }

  /** A heartbeat: lastSeen is stored at most once a minute per agent. */
  async seen(agentId: string): Promise<void> {
    const now = Date.now();
    if (now - (this.written.get(agentId) ?? 0) < LAST_SEEN_RESOLUTION_MS) return;
    this.written.set(agentId, now);
    const at = new Date(now).toISOString();
    await this.writes.update(agentId, (doc) => doc && { ...doc, lastSeen: at, status: "online" });
  }

  /** The session closed. */
  async offline(agentId: string): Promise<void> {
    this.written.delete(agentId);
    await this.writes.update(agentId, (doc) => (doc && doc.status !== "offline" ? { ...doc, status: "offline" } : null));
  }

  /**
   * Marks offline agents whose stored lastSeen is older than three heartbeats
   * plus the write resolution: sessions lost with a replica that died never
   * said goodbye. `connected` are this process's open sessions.
   */
  async sweep(connected: ReadonlySet<string>): Promise<number> {
    const cutoff = Date.now() - OFFLINE_AFTER_HEARTBEATS * this.heartbeatSeconds * 1000 - LAST_SEEN_RESOLUTION_MS;
    let marked = 0;
    for await (const doc of scan<AgentRecord>(this.store, AGENTS)) {
      const { status, lastSeen } = doc.data;
      if (status !== "online" || connected.has(doc.id) || (lastSeen !== null && Date.parse(lastSeen) >= cutoff)) continue;
      marked++;
      await this.writes.update(doc.id, (current) => (current && current.lastSeen === lastSeen && current.status === "online" ? { ...current, status: "offline" } : null));
    }
    return marked;
  }

  /** Forgets a host; audited. */
  async remove(who: Actor, agentId: string): Promise<void> {
    const doc = await this.store.get<AgentRecord>(AGENTS, agentId);
    if (!doc) throw new NotFoundError("Agent", agentId);
    await this.writes.flush();
    await this.store.write(
      [{ op: "delete", collection: AGENTS, id: agentId }],
      [auditEntry(who, "agent.delete", "agent", agentId, { name: doc.data.name, tokenId: doc.data.tokenId })],
    );
    this.written.delete(agentId);
  }

  async get(agentId: string): Promise<AgentRecord> {
    const doc = await this.store.get<AgentRecord>(AGENTS, agentId);
    if (!doc) throw new NotFoundError("Agent", agentId);
    return doc.data;
  }

  /** A page in id order, filtered by status and by text in id, name or environment. */
  async list(filter: { status?: AgentStatus; q?: string }, limit: number, after?: string): Promise<{ items: AgentRecord[]; nextCursor: string | null }> {
    const q = filter.q?.toLowerCase();
    const matches = (a: AgentRecord) =>
      (filter.status === undefined || a.status === filter.status) &&
      (q === undefined || a.id.toLowerCase().includes(q) || a.name.toLowerCase().includes(q) || a.environment.toLowerCase().includes(q));
    const items: AgentRecord[] = [];
    for await (const doc of scan<AgentRecord>(this.store, AGENTS, after)) {
      if (!matches(doc.data)) continue;
      if (items.length === limit) return { items, nextCursor: items[items.length - 1]!.id };
      items.push(doc.data);
    }
    return { items, nextCursor: null };
  }

  /**
   * Whether a session admitted with `token` (enrollment `tokenId`) still
   * speaks for the agent: the token is not revoked and is still the one the
   * agent is enrolled with. Re-checked while the session lives.
   */
  async stillAdmitted(token: string, tokenId: string, agentId: string): Promise<boolean> {
    const binding = await this.enrollment.agentToken(token);
    if (binding?.tokenId !== tokenId) return false;
    return (await this.store.get<AgentRecord>(AGENTS, agentId))?.data.tokenId === tokenId;
  }

  /** Flushes queued writes (shutdown, tests). */
  flush(): Promise<void> {
    return this.writes.flush();
  }

  close(): Promise<void> {
    return this.writes.close();
  }
}
