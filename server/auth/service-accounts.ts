/**
 * Service accounts: named holders of a scope set and one Bearer token. The
 * token is stored as its digest under `tokens/<sha256>`, so authenticating is
 * one keyed read, and revoking deletes the account and its token together.
 */
import { auditEntry, SYSTEM_ACTOR, type Actor } from "../audit/audit.ts";
import { ConflictError, ForbiddenError, NotFoundError } from "../errors.ts";
import type { Store, WriteOp } from "../store/store.ts";
import type { LiveCredential } from "./live.ts";
import { missingScope, ROLES, type Scope } from "./scopes.ts";
import { digestsEqual, hashToken, mintToken, tokenKind, TOKENS, type TokenKind } from "./tokens.ts";

export interface ServiceAccount {
  id: string;
  name: string;
  scopes: Scope[];
  createdAt: string;
  createdBy: string;
}

/** As stored: the account plus its token's digest (never shown), so revoking needs no scan. */
interface StoredAccount extends ServiceAccount {
  tokenDigest: string;
}

/** What a token digest points to. Later token kinds (enrollment, collector) share the collection. */
export interface TokenRecord {
  kind: TokenKind;
  subjectId: string;
  createdAt: string;
}

/**
 * A caller: a service account (Bearer token), a web UI user (session cookie;
 * actor `user:<username>`), or nobody on a public route (kind "anonymous",
 * no scopes).
 */
export interface Principal extends Actor {
  kind: "serviceAccount" | "user" | "anonymous";
  id: string;
  name: string;
  scopes: ReadonlySet<Scope>;
  /** For a user: the session the cookie names (its digest) and the CSRF token writes must echo. */
  session?: { id: string; csrfToken: string };
  /** What the credential stands on, for a connection that outlives this request (an event stream). */
  live?: LiveCredential;
}

const ACCOUNTS = "service_accounts";
const NAMES = "service_account_names";
const BOOTSTRAP = { collection: "system", id: "bootstrap" };

export class ServiceAccounts {
  constructor(private readonly store: Store) {}

  /**
   * Creates an account and its token. A caller may grant only scopes it holds
   * itself, so no credential can mint a stronger one.
   */
  async create(
    caller: Principal | null,
    who: Actor,
    name: string,
    scopes: Scope[],
    token: string = mintToken("serviceAccount"),
    extra: WriteOp[] = [],
  ): Promise<{ account: ServiceAccount; token: string }> {
    const unique = [...new Set(scopes)].sort();
    const missing = caller ? missingScope(caller.scopes, unique) : undefined;
    if (missing) throw new ForbiddenError(missing, `Only scopes the caller holds can be granted, and '${missing}' is not one of them.`);
    const taken = () => new ConflictError(`A service account named '${name}' already exists.`, "name_taken");
    if (await this.store.get(NAMES, name)) throw taken();
    const now = new Date().toISOString();
    const account: ServiceAccount = { id: Bun.randomUUIDv7(), name, scopes: unique, createdAt: now, createdBy: who.actor };
    const tokenDigest = hashToken(token);
    const record: TokenRecord = { kind: "serviceAccount", subjectId: account.id, createdAt: now };
    const stored: StoredAccount = { ...account, tokenDigest };
    await this.store
      .write(
        [
          { op: "put", collection: ACCOUNTS, id: account.id, data: stored, expect: "absent" },
          { op: "put", collection: NAMES, id: name, data: { id: account.id }, expect: "absent" },
          { op: "put", collection: TOKENS, id: tokenDigest, data: record, expect: "absent" },
          ...extra,
        ],
        [auditEntry(who, "service_account.create", "service_account", account.id, { name, scopes: unique })],
      )
      .catch((error) => {
        throw error instanceof ConflictError ? taken() : error;
      });
    return { account, token };
  }

  async list(): Promise<ServiceAccount[]> {
    return (await this.store.list<StoredAccount>(ACCOUNTS)).map(({ data: { tokenDigest: _, ...account } }) => account);
  }

  /** Deletes the account and revokes its token in one write; only a caller holding all its scopes may. */
  async delete(caller: Principal, id: string): Promise<void> {
    const doc = await this.store.get<StoredAccount>(ACCOUNTS, id);
    if (!doc) throw new NotFoundError("Service account", id);
    const missing = missingScope(caller.scopes, doc.data.scopes);
    if (missing)
      throw new ForbiddenError(missing, `Service account '${doc.data.name}' holds '${missing}', which the caller does not, so the caller cannot delete it.`);
    await this.store.write(
      [
        { op: "delete", collection: ACCOUNTS, id, expect: doc.version },
        { op: "delete", collection: NAMES, id: doc.data.name },
        { op: "delete", collection: TOKENS, id: doc.data.tokenDigest },
      ],
      [auditEntry(caller, "service_account.delete", "service_account", id, { name: doc.data.name })],
    );
  }

  /** The principal a service-account token stands for, or null for any other string. */
  async authenticate(token: string, remoteAddr: string | null): Promise<Principal | null> {
    if (tokenKind(token) !== "serviceAccount") return null;
    const digest = hashToken(token);
    const record = await this.store.get<TokenRecord>(TOKENS, digest);
    if (record?.data.kind !== "serviceAccount" || !digestsEqual(record.id, digest)) return null;
    const account = await this.store.get<ServiceAccount>(ACCOUNTS, record.data.subjectId);
    if (!account) return null;
    const { id, name, scopes } = account.data;
    // Deleting the account deletes both; its scopes never change.
    const live: LiveCredential = { standsOn: [`${TOKENS}/${digest}`, `${ACCOUNTS}/${id}`] };
    return { kind: "serviceAccount", id, name, scopes: new Set(scopes), actor: `sa:${name}`, remoteAddr, live };
  }

  /**
   * On the very first start, creates the `admin` service account (with the
   * configured token when one is given) and returns its token to show once.
   * Returns null on every later start.
   */
  async bootstrapAdmin(configuredToken: string): Promise<string | null> {
    if (await this.store.get(BOOTSTRAP.collection, BOOTSTRAP.id)) return null;
    const token = configuredToken === "" ? undefined : configuredToken;
    const marker: WriteOp = {
      op: "put",
      collection: BOOTSTRAP.collection,
      id: BOOTSTRAP.id,
      data: { at: new Date().toISOString() },
      expect: "absent",
    };
    try {
      const { token: issued } = await this.create(null, SYSTEM_ACTOR, "admin", ROLES.admin, token, [marker]);
      return issued;
    } catch (error) {
      // Replicas starting together on a fresh database: another one created the admin (and printed its credential).
      if (error instanceof ConflictError) return null;
      throw error;
    }
  }
}
