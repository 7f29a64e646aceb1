/**
 * Which keys sealed the secrets a store holds, so a start with a new key file
 * or a migration to servers with another key is refused before a sealed value
 * becomes unreadable (server/main.ts), and a key rotation knows when the old
 * key is no longer needed (rotate.ts).
 */
import { scan } from "../store/scan.ts";
import type { Store } from "../store/store.ts";
import { SEALED_FIELD, sealedKeyId } from "./secrets.ts";

/**
 * How many sealed secrets each key id sealed. A sealed value is kept under a
 * field named `sealed` (SEALED_FIELD), so user text that merely looks like an
 * envelope (a tag, a header value) is not counted. A migration copies
 * documents verbatim, so the target's servers open them only with the same key.
 */
export async function sealedKeys(store: Store): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const visit = (value: unknown, field: string | null): void => {
    if (typeof value === "string") {
      const id = field === SEALED_FIELD ? sealedKeyId(value) : null;
      if (id !== null) counts.set(id, (counts.get(id) ?? 0) + 1);
    } else if (Array.isArray(value)) {
      for (const item of value) visit(item, null);
    } else if (value !== null && typeof value === "object") {
      for (const [key, item] of Object.entries(value)) visit(item, key);
    }
  };
  for (const name of await store.collections()) {
    for await (const doc of scan(store, name)) visit(doc.data, null);
  }
  return counts;
}
