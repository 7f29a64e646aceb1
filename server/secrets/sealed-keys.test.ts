import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { sealedKeys } from "./sealed-keys.ts";
import { KEY_BYTES, keyId, Secrets } from "./secrets.ts";
import { SqliteStore } from "../store/sqlite.ts";

test("sealedKeys counts envelopes kept under a `sealed` field only, not user text shaped like one", async () => {
  const store = new SqliteStore(":memory:");
  try {
    const key = randomBytes(KEY_BYTES);
    const envelope = new Secrets([key]).seal("svcct_x", "collector_tokens/c1");
    await store.write([
      { op: "put", collection: "collector_tokens", id: "c1", data: { digest: "d", sealed: envelope } },
      // An operator may type anything into a tag or a header value; it must not stop a migration.
      { op: "put", collection: "collectors", id: "c1", data: { tags: { note: envelope }, headers: [envelope] } },
    ]);
    expect([...(await sealedKeys(store)).entries()]).toEqual([[keyId(key), 1]]);
  } finally {
    store.close();
  }
});
