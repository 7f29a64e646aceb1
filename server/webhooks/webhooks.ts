/**
 * Webhook subscriptions and their queue, all in the store so every replica
 * sees them and a restart loses nothing:
 * - `webhooks/<id>`: url, events, the secret sealed with the secrets keyring;
 * - `webhook_queue/<hookId>.<eventId>`: one delivery. The id is derived from
 *   the event, so replicas that all saw it queue it once (expect absent); a
 *   finished one stays two days as a marker against the same event again;
 * - `webhook_deliveries/<hookId>.<uuidv7>`: the delivery log, newest kept.
 */
import { createHash } from "node:crypto";
import { auditEntry, type Actor } from "../audit/audit.ts";
import { ConflictError, NotFoundError } from "../errors.ts";
import type { Secrets } from "../secrets/secrets.ts";
import type { Store } from "../store/store.ts";
import type { Webhook, WebhookDelivery, WebhookEvent } from "../../shared/webhooks.ts";
import { checkWebhookUrl } from "./url.ts";

export const HOOKS = "webhooks";
export const QUEUE = "webhook_queue";
export const DELIVERIES = "webhook_deliveries";
/** Log entries kept per hook. */
export const LOG_LIMIT = 100;

interface StoredHook extends Webhook {
  secretSealed: string;
}

/** A condition checked when a delayed delivery falls due: false drops it unsent. */
export type QueueCheck = { kind: "stillOffline"; collectorId: string; lastSeen: string | null };

export interface QueuedDelivery {
  hookId: string;
  eventId: string;
  event: WebhookEvent;
  /** When the event happened (ISO); the payload's `time`. */
  time: string;
  data: Record<string, unknown>;
  attempts: number;
  firstAttemptAt: string | null;
  nextAt: number;
  /** A replica holds the delivery until then (the versioned claim). */
  leaseUntil: number;
  check?: QueueCheck;
  /** Set once delivered, abandoned or dropped: kept a while so a late copy of the event is not queued again. */
  doneAt?: number;
}

export interface EmitOptions {
  /** Not sent before this instant (ms); for events that must last (offline for N minutes). */
  notBefore?: number;
  check?: QueueCheck;
}

const sealContext = (id: string) => `webhook:${id}`;

export class Webhooks {
  constructor(
    private readonly store: Store,
    private readonly secrets: Secrets,
    private readonly now: () => number = Date.now,
    /** `webhooks.allowPrivateTargets`: loopback and private addresses may be targets (url.ts). */
    readonly allowPrivateTargets = false,
  ) {}

  async create(who: Actor, input: { url: string; events: WebhookEvent[]; secret: string }): Promise<Webhook> {
    const url = checkWebhookUrl(input.url, this.allowPrivateTargets);
    const id = Bun.randomUUIDv7();
    const hook: Webhook = { id, url, events: [...new Set(input.events)].sort(), createdAt: new Date(this.now()).toISOString(), createdBy: who.actor };
    const stored: StoredHook = { ...hook, secretSealed: this.secrets.seal(input.secret, sealContext(id)) };
    await this.store.write(
      [{ op: "put", collection: HOOKS, id, data: stored, expect: "absent" }],
      [auditEntry(who, "webhook.create", "webhook", id, { url, events: hook.events })],
    );
    return hook;
  }

  async list(): Promise<Webhook[]> {
    return (await this.store.list<StoredHook>(HOOKS)).map(({ data: { secretSealed: _, ...hook } }) => hook);
  }

  async get(id: string): Promise<Webhook> {
    const doc = await this.store.get<StoredHook>(HOOKS, id);
    if (!doc) throw new NotFoundError("Webhook", id);
    const { secretSealed: _, ...hook } = doc.data;
    return hook;
  }

  /** The hook with its secret opened, for signing; null once deleted. */
  async forDelivery(id: string): Promise<{ hook: Webhook; secret: string } | null> {
    const doc = await this.store.get<StoredHook>(HOOKS, id);
    if (!doc) return null;
    const { secretSealed, ...hook } = doc.data;
    return { hook, secret: this.secrets.openString(secretSealed, sealContext(id)) };
  }

  /** Deletes the hook, its queue and its log. */
  async delete(who: Actor, id: string): Promise<void> {
    const doc = await this.store.get<StoredHook>(HOOKS, id);
    if (!doc) throw new NotFoundError("Webhook", id);
    const queued = await this.store.list(QUEUE, { prefix: `${id}.` });
    const logged = await this.store.list(DELIVERIES, { prefix: `${id}.` });
    await this.store.write(
      [
        { op: "delete", collection: HOOKS, id, expect: doc.version },
        ...[...queued, ...logged].map((d) => ({ op: "delete" as const, collection: d.collection, id: d.id })),
      ],
      [auditEntry(who, "webhook.delete", "webhook", id, { url: doc.data.url })],
    );
  }

  /** The delivery log of a hook, newest first. */
  async deliveries(id: string): Promise<WebhookDelivery[]> {
    await this.get(id);
    return (await this.store.list<WebhookDelivery>(DELIVERIES, { prefix: `${id}.` })).map((d) => d.data).reverse();
  }

  /**
   * Queues `event` for every hook subscribed to it. `key` names the occurrence
   * (the same on every replica), so each hook gets it once however many saw it.
   */
  async emit(event: WebhookEvent, key: string, data: Record<string, unknown>, options: EmitOptions = {}): Promise<number> {
    const eventId = createHash("sha256").update(`${event}/${key}`).digest("hex").slice(0, 32);
    const now = this.now();
    let queued = 0;
    for (const { data: hook } of await this.store.list<StoredHook>(HOOKS)) {
      if (!hook.events.includes(event)) continue;
      const item: QueuedDelivery = {
        hookId: hook.id,
        eventId,
        event,
        time: new Date(now).toISOString(),
        data,
        attempts: 0,
        firstAttemptAt: null,
        nextAt: options.notBefore ?? now,
        leaseUntil: 0,
        ...(options.check ? { check: options.check } : {}),
      };
      try {
        await this.store.write([{ op: "put", collection: QUEUE, id: `${hook.id}.${eventId}`, data: item, expect: "absent" }]);
        queued++;
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
      }
    }
    return queued;
  }

  /** Appends to a hook's log and drops the oldest entries beyond LOG_LIMIT. */
  async log(hookId: string, entry: Omit<WebhookDelivery, "id">): Promise<void> {
    const id = `${hookId}.${Bun.randomUUIDv7("hex", new Date(this.now()))}`;
    await this.store.write([{ op: "put", collection: DELIVERIES, id, data: { id, ...entry } }]);
    const all = await this.store.list(DELIVERIES, { prefix: `${hookId}.` });
    const excess = all.slice(0, Math.max(0, all.length - LOG_LIMIT));
    if (excess.length) await this.store.write(excess.map((d) => ({ op: "delete" as const, collection: DELIVERIES, id: d.id })));
  }
}
