/**
 * The vault: every value ever set in a sensitive field, one sealed document
 * per version (`secrets/<id>`), never changed after it is written. The git
 * tree names a version by id; old commits keep naming theirs, so a config
 * rendered from any commit can still be delivered. Plaintexts opened once are
 * kept in memory: delivery opens the same few secrets for every collector.
 */
import type { Actor } from "../audit/audit.ts";
import type { Store, WriteOp } from "../store/store.ts";
import type { Secrets } from "./secrets.ts";
import { isSecretId } from "../../shared/sensitive.ts";

export const SECRETS_COLLECTION = "secrets";

/** `secrets/<id>`: the field is named `sealed` (SEALED_FIELD) so migrate and rotate-key find it. */
export interface SecretDoc {
  sealed: string;
  createdAt: string;
  createdBy: string;
}

/** A secret a config names that the vault does not hold (or cannot open): delivery must not guess. */
export class MissingSecretError extends Error {
  constructor(
    readonly id: string,
    reason: string,
  ) {
    super(`secret ${id} cannot be read: ${reason}`);
    this.name = "MissingSecretError";
  }
}

/** The authenticated context of a sealed document: its collection and id. */
export const sealContext = (collection: string, id: string) => `${collection}/${id}`;

export class SecretVault {
  private readonly opened = new Map<string, string>();

  constructor(
    private readonly store: Store,
    private readonly secrets: Secrets,
  ) {}

  /** A new version holding `plaintext`: its id, and the write that stores it (land it with the tree edit naming it). */
  seal(plaintext: string, who: Actor, now = new Date()): { id: string; op: WriteOp } {
    const id = Bun.randomUUIDv7("hex", now);
    const data: SecretDoc = { sealed: this.secrets.seal(plaintext, sealContext(SECRETS_COLLECTION, id)), createdAt: now.toISOString(), createdBy: who.actor };
    return { id, op: { op: "put", collection: SECRETS_COLLECTION, id, data, expect: "absent" } };
  }

  /** The plaintext of version `id`; MissingSecretError when it is not held or does not open. */
  async open(id: string): Promise<string> {
    const known = this.opened.get(id);
    if (known !== undefined) return known;
    if (!isSecretId(id)) throw new MissingSecretError(id, "not a secret id");
    const doc = await this.store.get<SecretDoc>(SECRETS_COLLECTION, id);
    if (!doc) throw new MissingSecretError(id, "the vault holds no such version");
    let plaintext: string;
    try {
      plaintext = this.secrets.openString(doc.data.sealed, sealContext(SECRETS_COLLECTION, id));
    } catch (error) {
      throw new MissingSecretError(id, (error as Error).message);
    }
    this.opened.set(id, plaintext);
    return plaintext;
  }
}
