/**
 * Which reported attribute keys may target collectors (docs/architecture.md
 * "Trust model"): what a collector says about itself is a fact, and a matcher
 * reads a reported key only when the server configuration names it
 * (`fleet.trustedAttributes`) or an admin lists it on the System page. The
 * admin's list is one store document, audited on every change; each replica
 * follows it on the change feed, so `keys()` answers from memory.
 */
import { auditEntry, type Actor } from "../audit/audit.ts";
import { ValidationError, type ErrorDetail } from "../errors.ts";
import type { Store } from "../store/store.ts";
import { isOwnKey, MAX_TRUSTED_KEYS, trustedKeyProblem, type TrustedKeys } from "./attributes.ts";

export const SETTINGS = "settings";
const TRUSTED_ID = "trusted-attributes";

/** The trusted keys and where each list comes from. */
export interface TrustedList {
  /** fleet.trustedAttributes: changed in the server configuration only. */
  configured: string[];
  /** The System page's list, what PUT /system/trusted-attributes sets. */
  listed: string[];
  /** Both, sorted: the keys matchers may read from reports. */
  trusted: string[];
}

export class TrustedAttributes {
  private listed: string[] = [];
  private current: TrustedKeys;
  private loading: Promise<void> | null = null;
  private readonly unwatch: () => void;

  constructor(
    private readonly store: Store,
    private readonly configured: readonly string[],
  ) {
    this.current = new Set(configured);
    this.unwatch = store.watch(
      (changes) => {
        if (changes.some((c) => c.collection === SETTINGS && c.id === TRUSTED_ID)) this.reload();
      },
      () => this.reload(),
    );
  }

  close(): void {
    this.unwatch();
  }

  /** Reads the admin's list once; later calls wait for the same read. */
  ready(): Promise<void> {
    this.loading ??= this.load();
    return this.loading;
  }

  /** The trusted keys now, one set per change (callers may cache by identity). Before ready(): the configured ones. */
  keys(): TrustedKeys {
    return this.current;
  }

  async list(): Promise<TrustedList> {
    await this.ready();
    return this.answer();
  }

  /**
   * Replaces the admin's list, audited (`attributes.trust`: the keys added and
   * removed). `vet` hears the keys whose trust this changes (those the
   * configuration trusts anyway are left out) and may refuse the change
   * (throw) before anything is written; a concurrent change is a 409.
   */
  async set(who: Actor, keys: readonly string[], vet: (changed: string[]) => Promise<void>): Promise<TrustedList> {
    await this.ready();
    if (keys.length > MAX_TRUSTED_KEYS)
      throw new ValidationError(`At most ${MAX_TRUSTED_KEYS} trusted keys.`, [{ path: "keys", message: `must hold at most ${MAX_TRUSTED_KEYS} keys` }]);
    const details: ErrorDetail[] = keys.flatMap((key, i) => {
      const problem = trustedKeyProblem(key);
      return problem === undefined ? [] : [{ path: `keys[${i}]`, message: problem }];
    });
    if (details.length > 0) throw new ValidationError(`Invalid trusted attribute: ${details[0]!.path} ${details[0]!.message}.`, details);
    const listed = [...new Set(keys)].sort();
    // The stored list, not this replica's copy of it: the audit entry says what this write changed.
    const doc = await this.store.get<{ keys: string[] }>(SETTINGS, TRUSTED_ID);
    const prior = doc?.data.keys ?? [];
    const added = listed.filter((key) => !prior.includes(key));
    const removed = prior.filter((key) => !listed.includes(key));
    if (added.length === 0 && removed.length === 0) {
      this.take(prior);
      return this.answer();
    }
    const changed = [...added, ...removed].filter((key) => !this.configured.includes(key));
    if (changed.length > 0) await vet(changed);
    await this.store.write(
      [{ op: "put", collection: SETTINGS, id: TRUSTED_ID, data: { keys: listed }, expect: doc?.version ?? "absent" }],
      [auditEntry(who, "attributes.trust", "settings", TRUSTED_ID, { added, removed, keys: listed })],
    );
    this.take(listed);
    return this.answer();
  }

  private async load(): Promise<void> {
    const doc = await this.store.get<{ keys: string[] }>(SETTINGS, TRUSTED_ID);
    this.take(doc?.data.keys ?? []);
  }

  private reload(): void {
    if (this.loading === null) return; // not read yet: the first ready() reads it
    const reload = this.load();
    this.loading = reload;
    reload.catch(() => {
      if (this.loading === reload) this.loading = null;
    });
  }

  private take(listed: string[]): void {
    this.listed = listed;
    this.current = new Set([...this.configured, ...listed]);
  }

  private answer(): TrustedList {
    return { configured: [...this.configured].sort(), listed: [...this.listed], trusted: [...this.current].sort() };
  }
}

/** Whether some collector holds a key as its own (a tag, for a key not svc's own), and whether some reports it without. */
export type KeyHolders = (key: string) => { own: boolean; reported: boolean };

/**
 * 400 naming each matcher (`path[i]`) whose key only collectors' own reports
 * hold: neither svc's own (environment, virtual), nor trusted, nor a tag on
 * any collector, yet reported by one. Such a matcher would read nothing (an
 * untrusted report is not read), so it is refused rather than saved to select
 * no one. A key no collector holds yet passes: it may be a tag to come.
 * `holders` answers from the attribute index (attribute-index.ts), not a walk of the fleet.
 */
export function refuseUntrusted(names: readonly string[], path: string, trusted: TrustedKeys, holders: KeyHolders): void {
  const open = new Set(names.filter((name) => !isOwnKey(name) && !trusted.has(name) && !holders(name).own));
  if (open.size === 0) return;
  const details: ErrorDetail[] = names.flatMap((name, i) =>
    open.has(name) && holders(name).reported
      ? [
          {
            path: `${path}[${i}]`,
            message: `"${name}" is an attribute collectors report about themselves, which no admin trusts: a matcher may read it only once it is trusted (System page, or fleet.trustedAttributes); to target by it, set it as a tag`,
          },
        ]
      : [],
  );
  if (details.length > 0) throw new ValidationError(`Matcher on an untrusted reported attribute: ${details[0]!.path}: ${details[0]!.message}.`, details);
}
