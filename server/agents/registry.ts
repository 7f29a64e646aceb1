/**
 * The host registry: one `agents/<agentId>` document per host agent, with
 * what it last said about its host and what it discovered there.
 *
 * Identity is bound server-side (docs/architecture.md "Host agent"). The first connection of an
 * agent id redeems the enrollment token (one use), binds the record to it and
 * mints the agent's own credential (`svcag_…`): only its digest is stored, the
 * plain value goes once to that session in its welcome, and the agent keeps it
 * in its state directory. Every later connection of that id must carry it, so
 * an enrollment token alone (even the same shared one) never takes over a
 * known host. Reconnects count no use, even after the token expired or ran
 * out of uses (those limit enrolling new hosts); a revoked token admits
 * nobody. A host holding its credential may move to another live token (its
 * config was rewritten): that counts a use and is audited with the token it
 * replaces. A host that lost its credential comes back only after an operator
 * allows it (`allowReenroll`, audited) or deletes the host.
 */
import type { Logger } from "pino";
import { auditEntry, SYSTEM_ACTOR, type Actor } from "../audit/audit.ts";
import { digestsEqual, hashToken, mintToken, tokenKind } from "../auth/tokens.ts";
import type { Enrollment } from "../enrollment/enrollment.ts";
import { ConflictError, NotFoundError } from "../errors.ts";
import { Coalescer } from "../store/coalesce.ts";
import { scan } from "../store/scan.ts";
import type { Store } from "../store/store.ts";
import type { DiscoveryReport, Hello, HostFacts } from "../../shared/agent-protocol.ts";
import type { AgentStatus } from "../../shared/agent-status.ts";

export const AGENTS = "agents";

export interface AgentRecord {
  id: string;
  /** The host name from its last hello (the id until then). */
  name: string;
  /** The token's environment when it has one, else the agent's `agent.environment`. */
  environment: string;
  version: string | null;
  tokenId: string;
  /** SHA-256 of the agent's own credential; null for a host enrolled before credentials existed. */
  credentialHash: string | null;
  /** An operator allowed the next connection with a usable token to enroll this id afresh. */
  reenroll: boolean;
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
  /** A credential minted for this session, to be handed to the agent once; null when it already holds one. */
  credential: string | null;
}

/** Why a connection is not admitted: its token, or a known id without its credential. */
export type Refusal = "token" | "identity";

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

  /**
   * Whether `token`, with the agent's own `credential` (null when it has none),
   * admits the agent `agentId`; why not otherwise.
   */
  async admit(token: string, agentId: string, credential: string | null): Promise<Admission | Refusal> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const binding = await this.enrollment.agentToken(token);
      if (!binding) return "token";
      const current = await this.store.get<AgentRecord>(AGENTS, agentId);
      const bound = current?.data.credentialHash ?? null;
      const proven = bound !== null && credential !== null && tokenKind(credential) === "agent" && digestsEqual(hashToken(credential), bound);
      if (current && !current.data.reenroll) {
        // A host enrolled before credentials existed gets one on its next connection with its own token.
        const legacy = bound === null && current.data.tokenId === binding.tokenId;
        if (!proven && !legacy) return "identity";
        if (proven && current.data.tokenId === binding.tokenId) return { agentId, ...binding, credential: null };
      }
      // The token the host is bound to counts no use again; moving to another one does.
      const redeemed = current?.data.tokenId === binding.tokenId ? binding : await this.enrollment.redeemAgent(token);
      if (!redeemed) return "token";
      const issued = proven && !current!.data.reenroll ? null : mintToken("agent");
      const now = new Date().toISOString();
      const record: AgentRecord = current
        ? {
            ...current.data,
            tokenId: redeemed.tokenId,
            environment: redeemed.environment ?? current.data.environment,
            credentialHash: issued === null ? bound : hashToken(issued),
            reenroll: false,
          }
        : {
            id: agentId,
            name: agentId,
            environment: redeemed.environment ?? "production",
            version: null,
            tokenId: redeemed.tokenId,
            credentialHash: hashToken(issued!),
            reenroll: false,
            status: "offline",
            enrolledAt: now,
            connectedAt: null,
            lastSeen: null,
            host: null,
            browse: null,
            discovery: null,
            discoveredAt: null,
          };
      const action = !current
        ? "agent.enroll"
        : current.data.reenroll
          ? "agent.reenroll"
          : current.data.tokenId === redeemed.tokenId
            ? "agent.credential"
            : "agent.enroll";
      const details = { tokenId: redeemed.tokenId, ...(current && current.data.tokenId !== redeemed.tokenId ? { previousTokenId: current.data.tokenId } : {}) };
      try {
        await this.store.write(
          [{ op: "put", collection: AGENTS, id: agentId, data: record, expect: current?.version ?? "absent" }],
          [auditEntry(SYSTEM_ACTOR, action, "agent", agentId, details)],
        );
        return { agentId, ...redeemed, credential: issued };
      } catch (error) {
        // Another session of the same agent enrolled it meanwhile: look again.
        if (!(error instanceof ConflictError)) throw error;
      }
    }
    return "identity";
  }

  /**
   * Lets the next connection of `agentId` with a usable agent token enroll it
   * afresh, with a new credential (the host lost its own, or moved); audited.
   * The current session, if any, stays until that connection replaces it.
   */
  async allowReenroll(who: Actor, agentId: string): Promise<void> {
    for (;;) {
      await this.writes.flush();
      const doc = await this.store.get<AgentRecord>(AGENTS, agentId);
      if (!doc) throw new NotFoundError("Agent", agentId);
      try {
        await this.store.write(
          [{ op: "put", collection: AGENTS, id: agentId, data: { ...doc.data, reenroll: true }, expect: doc.version }],
          [auditEntry(who, "agent.reenroll.allow", "agent", agentId, { name: doc.data.name, tokenId: doc.data.tokenId })],
        );
        return;
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
      }
    }
  }

  /** A session opened and said hello: the host facts replace the old ones and the agent is online. */
  async hello(agentId: string, hello: Hello, tokenEnvironment: string | null): Promise<void> {
    const now = Date.now();
    this.written.set(agentId, now);
    const at = new Date(now).toISOString();
    await this.writes.update(
      agentId,
      (doc) =>
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
      await this.writes.update(doc.id, (current) =>
        current && current.lastSeen === lastSeen && current.status === "online" ? { ...current, status: "offline" } : null,
      );
    }
    return marked;
  }

  /** Audits a call relayed to the agent (browse, sample, rescan), answered or not: `error` is the code it failed with. */
  async relayed(who: Actor, agentId: string, action: string, details: Record<string, unknown>, error?: string): Promise<void> {
    const entry =
      error === undefined ? auditEntry(who, action, "agent", agentId, details) : auditEntry(who, action, "agent", agentId, { ...details, error }, "failure");
    await this.store.write([], [entry]);
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
