/** TargetDelivery against a real SQLite store: what a listener of onTargetChanged hears, and what it reads then. */
import { afterEach, beforeEach, expect, test } from "bun:test";
import pino from "pino";
import { Collectors } from "../collectors/collectors.ts";
import { SqliteStore } from "../store/sqlite.ts";
import type { RenderedConfig } from "./renderer.ts";
import { RENDERED, storedRendered } from "./records.ts";
import { TargetDelivery } from "./target-delivery.ts";

let store: SqliteStore;
let delivery: TargetDelivery;

beforeEach(() => {
  store = new SqliteStore(":memory:");
  delivery = new TargetDelivery(store, new Collectors(store), { open: async () => "" }, pino({ level: "silent" }));
});
afterEach(async () => {
  await delivery.close();
  await store.close();
});

/** Stores a rendered config and makes it the collector's target, as a publish on any replica would. */
async function retarget(collectorId: string, hash: string, seq: number): Promise<void> {
  const rendered: RenderedConfig = { hash, runtime: "otelcol", contentType: "text/yaml", body: `# ${hash}\n` };
  const target = { collectorId, targetHash: hash, targetCommit: "c", targetSeq: seq, state: "outdated", error: null, updatedAt: "" };
  await store.write([
    { op: "put", collection: RENDERED, id: hash, data: rendered },
    { op: "put", collection: "collector_config", id: collectorId, data: target },
  ]);
}

test("a listener hears of a changed target after the cached one is dropped, so it reads the new one; unsubscribed, it hears nothing", async () => {
  await retarget("c1", "h1", 1);
  expect((await delivery.target("c1"))?.rendered.hash).toBe("h1");
  const heard: { id: string | undefined; hash: string | undefined }[] = [];
  let read = Promise.resolve();
  const off = delivery.onTargetChanged((id) => {
    read = delivery.target(id!).then((t) => void heard.push({ id, hash: t?.rendered.hash }));
  });
  await retarget("c1", "h2", 2);
  await read;
  expect(heard).toEqual([{ id: "c1", hash: "h2" }]);
  expect((await storedRendered(store, "h2"))?.body).toBe("# h2\n");

  off();
  await retarget("c1", "h3", 3);
  await read;
  expect(heard).toHaveLength(1);
});

test("a rendered config rewritten in place (the secrets upgrade taking a plaintext out) is read again, not served from memory", async () => {
  await retarget("c1", "h1", 1);
  expect((await delivery.target("c1"))?.rendered.body).toBe("# h1\n");
  const rewritten: RenderedConfig = { hash: "h1", runtime: "otelcol", contentType: "text/yaml", body: "# h1, rewritten\n" };
  await store.write([{ op: "put", collection: RENDERED, id: "h1", data: rewritten }]);
  await Bun.sleep(50);
  expect((await delivery.target("c1"))?.rendered.body).toBe("# h1, rewritten\n");
});
