/**
 * The external Store adapter a database URI names, by its scheme: one place
 * that knows which adapters exist, for the server (opening in the background)
 * and the maintenance commands (opening now) alike.
 */
import type { ConnectOptions } from "./external.ts";
import { MongoStore } from "./mongodb.ts";
import { PostgresStore } from "./postgres.ts";
import type { Store } from "./store.ts";

/** The options every external adapter takes. */
export interface ExternalOptions extends ConnectOptions {
  /** The database to use when the URI names none (database.database). */
  database?: string;
}

export interface ExternalAdapter {
  /** The database's name in messages. */
  kind: "PostgreSQL" | "MongoDB";
  /** Opens now; throws when it cannot. */
  open(uri: string, options: ExternalOptions): Promise<Store>;
  /** The store at once, opening in the background; `ready` resolves once it is open. */
  connect(uri: string, options: ExternalOptions): { store: Store; ready: Promise<void> };
}

const POSTGRES: ExternalAdapter = {
  kind: "PostgreSQL",
  open: (uri, options) => PostgresStore.open(uri, options),
  connect: (uri, options) => PostgresStore.connect(uri, options),
};
const MONGO: ExternalAdapter = {
  kind: "MongoDB",
  open: (uri, options) => MongoStore.open(uri, options),
  connect: (uri, options) => MongoStore.connect(uri, options),
};
const BY_SCHEME: Record<string, ExternalAdapter> = { postgres: POSTGRES, postgresql: POSTGRES, mongodb: MONGO, "mongodb+srv": MONGO };

/** The adapter for `uri`'s scheme (case-insensitive), or null when it names none. */
export function externalAdapter(uri: string): ExternalAdapter | null {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(uri)?.[1]?.toLowerCase() ?? "";
  return Object.hasOwn(BY_SCHEME, scheme) ? BY_SCHEME[scheme]! : null;
}
