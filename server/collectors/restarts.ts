/**
 * Restarting a collector on an operator's word (`POST /collectors/{id}/restart`):
 * the request is a document, `restart_requests/<collectorId>`, audited as
 * `collector.restart`. The OpAMP channel of the replica that holds the
 * collector's session hears it on the change feed and sends the OpAMP
 * restart command (an HTTP poller gets it in the reply to its next poll); the
 * first replica to deliver it marks it delivered, so it is sent once, never
 * again after a server restart or on another replica. A request not delivered
 * within RESTART_REQUEST_TTL_MS lapses: a collector that comes back later is
 * not restarted for a click made long before.
 */
import type { Collector } from "../../shared/collectors.ts";
import { auditEntry, type Actor } from "../audit/audit.ts";
import { ConflictError } from "../errors.ts";
import type { Store } from "../store/store.ts";
import type { Collectors } from "./collectors.ts";

export const RESTART_REQUESTS = "restart_requests";
/** How long a restart request waits for its collector. */
export const RESTART_REQUEST_TTL_MS = 10 * 60 * 1000;

export interface RestartRequest {
  collectorId: string;
  requestId: string;
  requestedAt: string;
  actor: string;
  /** Set by the replica that sent the command. */
  deliveredAt?: string;
}

export class Restarts {
  constructor(
    private readonly store: Pick<Store, "get" | "write">,
    private readonly collectors: Pick<Collectors, "get">,
  ) {}

  /** Records the request (409 for a collector that is not managed over OpAMP: nothing can restart it). */
  async request(who: Actor, collectorId: string): Promise<RestartRequest> {
    const collector: Collector = await this.collectors.get(collectorId);
    if (collector.managementMode !== "opamp") {
      throw new ConflictError(
        `Collector ${collector.name} is managed by remote config, which has no restart command; restart it on its host.`,
        "restart_unsupported",
      );
    }
    const request: RestartRequest = { collectorId, requestId: Bun.randomUUIDv7(), requestedAt: new Date().toISOString(), actor: who.actor };
    await this.store.write(
      [{ op: "put", collection: RESTART_REQUESTS, id: collectorId, data: request }],
      [auditEntry(who, "collector.restart", "collector", collectorId, { requestId: request.requestId })],
    );
    return request;
  }

  /** The collector's request that still waits for delivery, if any. */
  async pending(collectorId: string, now = Date.now()): Promise<RestartRequest | null> {
    const doc = await this.store.get<RestartRequest>(RESTART_REQUESTS, collectorId);
    if (!doc || doc.data.deliveredAt || now - Date.parse(doc.data.requestedAt) > RESTART_REQUEST_TTL_MS) return null;
    return doc.data;
  }

  /**
   * Claims the request for delivery: true for the one caller (on any replica)
   * that may send the command, false when it was delivered, replaced or lapsed.
   */
  async claim(request: RestartRequest): Promise<boolean> {
    const doc = await this.store.get<RestartRequest>(RESTART_REQUESTS, request.collectorId);
    if (!doc || doc.data.requestId !== request.requestId || doc.data.deliveredAt) return false;
    try {
      await this.store.write([
        { op: "put", collection: RESTART_REQUESTS, id: request.collectorId, data: { ...doc.data, deliveredAt: new Date().toISOString() }, expect: doc.version },
      ]);
      return true;
    } catch (error) {
      if (error instanceof ConflictError) return false;
      throw error;
    }
  }
}
