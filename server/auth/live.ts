/**
 * Live credentials: ending connections that outlive the check made when they
 * opened (an OpAMP or host-agent WebSocket, a server-sent event stream). Each
 * such connection registers the store documents its credential stands on (a
 * token digest under `tokens/`, a UI session, its user, its collector) and is
 * ended the moment one of them is deleted: rotating, revoking, disabling and
 * deleting all delete one, here or on another replica, and the store's change
 * feed carries both. Documents whose change may narrow the credential without
 * deleting anything (a user's role) re-run the credential's own check. A
 * credential with an end (an enrollment token's expiry, a UI session's
 * absolute end) is ended then. When the feed may have missed changes, every
 * registration is checked again against the store.
 */
import type { Logger } from "pino";
import type { Store } from "../store/store.ts";
import { hashToken, TOKENS } from "./tokens.ts";

/** What a live connection's credential depends on. */
export interface LiveCredential {
  /** `collection/id` of the documents the credential stands on: deleting any of them ends it. */
  standsOn: readonly string[];
  /** Documents whose change may end it: `check` runs again after each change. */
  watches?: readonly string[];
  /** Whether the credential still holds, read from the store. */
  check?: () => Promise<boolean>;
  /** When it ends by itself (ms since the epoch). */
  endsAt?: number;
}

/** A registered connection: `ended` is read before each use; `release` when the connection closes by itself. */
export interface LiveHold {
  readonly ended: boolean;
  /** The connection now also stands on this document (e.g. the collector a session turned out to be). */
  standOn(doc: string): void;
  release(): void;
}

/** Why a connection was ended, as its close reason says. */
export const ENDED = {
  revoked: "the credential was revoked, rotated or deleted",
  changed: "the credential no longer grants this session",
  expired: "the credential expired",
} as const;

/** The store document a Bearer token stands on (its digest under `tokens/`). */
export const tokenDoc = (token: string): string => `${TOKENS}/${hashToken(token)}`;

/** setTimeout's longest delay; later ends are re-armed. */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface Entry {
  credential: LiveCredential & { standsOn: string[] };
  end: (reason: string) => void;
  ended: boolean;
  timer: Timer | null;
}

export class LiveCredentials {
  private readonly entries = new Set<Entry>();
  /** Document → registrations that stand on or watch it. */
  private readonly byDoc = new Map<string, Set<Entry>>();
  private readonly unwatch: () => void;

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
  ) {
    this.unwatch = store.watch(
      (changes) => {
        for (const change of changes) {
          const doc = `${change.collection}/${change.id}`;
          const entries = this.byDoc.get(doc);
          if (!entries) continue;
          for (const entry of [...entries]) {
            if (change.op === "delete" && entry.credential.standsOn.includes(doc)) this.end(entry, ENDED.revoked);
            else if (entry.credential.watches?.includes(doc)) this.recheck(entry, false);
          }
        }
      },
      () => {
        for (const entry of [...this.entries]) this.recheck(entry, true);
      },
    );
  }

  /** Live connections registered. */
  get size(): number {
    return this.entries.size;
  }

  /** Registers a connection; `end` closes it (called at most once, never after `release`). */
  register(credential: LiveCredential, end: (reason: string) => void): LiveHold {
    const entry: Entry = { credential: { ...credential, standsOn: [...credential.standsOn] }, end, ended: false, timer: null };
    this.entries.add(entry);
    for (const doc of [...entry.credential.standsOn, ...(credential.watches ?? [])]) this.index(doc, entry);
    if (credential.endsAt !== undefined) this.arm(entry, credential.endsAt);
    return {
      get ended() {
        return entry.ended || (credential.endsAt !== undefined && Date.now() >= credential.endsAt);
      },
      standOn: (doc) => {
        if (entry.ended || entry.credential.standsOn.includes(doc)) return;
        entry.credential.standsOn.push(doc);
        this.index(doc, entry);
      },
      release: () => this.release(entry),
    };
  }

  close(): void {
    this.unwatch();
    for (const entry of [...this.entries]) this.release(entry);
  }

  private index(doc: string, entry: Entry): void {
    let set = this.byDoc.get(doc);
    if (!set) this.byDoc.set(doc, (set = new Set()));
    set.add(entry);
  }

  private arm(entry: Entry, at: number): void {
    const wait = at - Date.now();
    if (wait <= 0) return void queueMicrotask(() => this.end(entry, ENDED.expired));
    entry.timer = setTimeout(() => (wait > MAX_TIMER_MS ? this.arm(entry, at) : this.end(entry, ENDED.expired)), Math.min(wait, MAX_TIMER_MS));
    entry.timer.unref();
  }

  private release(entry: Entry): void {
    if (!this.entries.delete(entry)) return;
    if (entry.timer) clearTimeout(entry.timer);
    for (const doc of [...entry.credential.standsOn, ...(entry.credential.watches ?? [])]) {
      const set = this.byDoc.get(doc);
      set?.delete(entry);
      if (set?.size === 0) this.byDoc.delete(doc);
    }
  }

  private end(entry: Entry, reason: string): void {
    if (entry.ended || !this.entries.has(entry)) return;
    entry.ended = true;
    this.release(entry);
    try {
      entry.end(reason);
    } catch (error) {
      this.log.warn({ err: error }, "live credential: ending a connection failed");
    }
  }

  /**
   * Runs the credential's check (after the change batch, so caches dropped by
   * other listeners of the same batch are dropped first); with `full`, also
   * whether every document it stands on still exists. A store that cannot
   * answer ends nothing: the next change or resync asks again.
   */
  private recheck(entry: Entry, full: boolean): void {
    queueMicrotask(async () => {
      if (entry.ended) return;
      try {
        if (full) {
          for (const doc of entry.credential.standsOn) {
            const slash = doc.indexOf("/");
            if ((await this.store.get(doc.slice(0, slash), doc.slice(slash + 1))) === null) return this.end(entry, ENDED.revoked);
          }
        }
        if (entry.credential.check && !(await entry.credential.check())) this.end(entry, ENDED.changed);
      } catch (error) {
        this.log.warn({ err: error }, "live credential: re-checking a connection's credential failed");
      }
    });
  }
}
