/**
 * Live changes for the UI (`GET /api/v1/events`, server-sent events). The
 * hub turns the store's change feed (which also carries other replicas'
 * writes) into a few event types, reads each changed record once however
 * many clients listen, and drops a client that cannot keep up rather than
 * buffering for it without bound. When the feed may have missed changes (an
 * external store's feed reconnected) every client gets a `resync` event:
 * refetch whatever it shows.
 */
import type { Logger } from "pino";
import type { LiveCredential, LiveCredentials, LiveHold } from "../auth/live.ts";
import type { Scope } from "../auth/scopes.ts";
import type { Change, Store } from "../store/store.ts";

export interface LiveEvent {
  type: "collector" | "config_target" | "rollout" | "worktree";
  id: string;
  op: "put" | "delete";
  /** The record as stored, for collectors and config targets; others are a nudge to refetch. */
  data?: unknown;
}

/** Which store collections become events, and the scope a client needs to see them. */
const TOPICS: Record<string, { type: LiveEvent["type"]; scope: Scope; withData: boolean }> = {
  collectors: { type: "collector", scope: "collectors:read", withData: true },
  collector_config: { type: "config_target", scope: "config:read", withData: true },
  system: { type: "rollout", scope: "config:read", withData: false },
  rollouts: { type: "rollout", scope: "config:read", withData: false },
  worktree: { type: "worktree", scope: "config:read", withData: false },
};

/** Changes may have been missed: whatever the client shows must be fetched again. */
export interface ResyncEvent {
  type: "resync";
}

type Listener = (event: LiveEvent | ResyncEvent) => void;

interface Subscriber {
  scopes: ReadonlySet<string>;
  listener: Listener;
  /** Ends the subscriber's stream at shutdown. */
  end?: () => void;
}

export class EventHub {
  private readonly subscribers = new Set<Subscriber>();
  private readonly unwatch: () => void;

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
  ) {
    this.unwatch = store.watch(
      (changes) => {
        if (this.subscribers.size > 0) void this.dispatch(changes);
      },
      () => {
        for (const s of this.subscribers) s.listener({ type: "resync" });
      },
    );
  }

  get size(): number {
    return this.subscribers.size;
  }

  private async dispatch(changes: Change[]): Promise<void> {
    for (const change of changes) {
      const topic = TOPICS[change.collection];
      if (!topic || (change.collection === "system" && change.id !== "latest_rollout")) continue;
      const event: LiveEvent = { type: topic.type, id: change.id, op: change.op };
      if (topic.withData && change.op === "put") {
        try {
          event.data = (await this.store.get(change.collection, change.id))?.data;
        } catch (error) {
          this.log.warn({ err: error }, "live event: record read failed");
          continue;
        }
      }
      for (const s of this.subscribers) if (s.scopes.has(topic.scope)) s.listener(event);
    }
  }

  /** Events the holder of `scopes` may see; returns the unsubscribe. `end` is called if the hub closes first. */
  subscribe(scopes: ReadonlySet<string>, listener: Listener, end?: () => void): () => void {
    const subscriber: Subscriber = { scopes, listener, ...(end ? { end } : {}) };
    this.subscribers.add(subscriber);
    return () => this.subscribers.delete(subscriber);
  }

  /** Ends every open stream (a graceful HTTP stop waits for open responses) and stops listening. */
  close(): void {
    this.unwatch();
    const subscribers = [...this.subscribers];
    this.subscribers.clear();
    for (const s of subscribers) s.end?.();
  }
}

/** Under the HTTP server's 10 s idle timeout (Bun's default, kept against slow clients), or a quiet stream is cut. */
const KEEPALIVE_MS = 5_000;
/** Bytes queued for a slow client before it is cut off. */
const MAX_BACKLOG = 1024 * 1024;

/** Whose stream it is: the scopes it may see, and the credential that ends it (deleted token, ended session, disabled user). */
export interface StreamHolder {
  scopes: ReadonlySet<string>;
  live?: LiveCredential;
}

/**
 * A text/event-stream answer fed by the hub until the client goes away or
 * the holder's credential ends (the stream then ends with a `: ended` comment
 * saying why; the browser's reconnect meets a 401).
 */
export function eventStream(hub: EventHub, holder: StreamHolder, credentials: LiveCredentials): Response {
  const encoder = new TextEncoder();
  let stop = () => {};
  const stream = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const send = (text: string) => {
          if ((controller.desiredSize ?? 0) < -MAX_BACKLOG) {
            stop();
            controller.error(new Error("client too slow"));
            return;
          }
          controller.enqueue(encoder.encode(text));
        };
        send(": connected\n\n");
        let hold: LiveHold | null = null;
        const unsubscribe = hub.subscribe(
          holder.scopes,
          // Checked on every event too: nothing is sent once the credential has ended.
          (event) => {
            if (!hold?.ended) send(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
          },
          () => {
            stop();
            controller.close();
          },
        );
        const keepalive = setInterval(() => send(": keepalive\n\n"), KEEPALIVE_MS);
        stop = () => {
          clearInterval(keepalive);
          unsubscribe();
          hold?.release();
        };
        if (holder.live) {
          hold = credentials.register(holder.live, (reason) => {
            stop();
            try {
              controller.enqueue(encoder.encode(`: ended: ${reason}\n\n`));
              controller.close();
            } catch {
              // The client went away meanwhile.
            }
          });
        }
      },
      cancel() {
        stop();
      },
    },
    { highWaterMark: 0 },
  );
  return new Response(stream, {
    headers: { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-store", "X-Accel-Buffering": "no" },
  });
}
