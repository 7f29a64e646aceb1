/**
 * The worker side of sqlite-writer.ts: the embedded store's own connection
 * for writing, on a thread of its own, so the B-tree work and the fsync of
 * every commit never hold the server's event loop. Each message is a batch of
 * writes, committed together (sqlite-batch.ts); the answer is each one's
 * outcome, sent once the commit is durable.
 */
import { Database } from "bun:sqlite";
import { commitBatch, prepare, type Statements } from "./sqlite-batch.ts";
import type { WriterReply, WriterRequest } from "./sqlite-writer.ts";

declare const self: Worker;

let db: Database | null = null;
let stmts: Statements | null = null;

self.onmessage = ({ data }: MessageEvent<WriterRequest>) => {
  let reply: WriterReply;
  try {
    if (db === null) {
      db = new Database(data.path, { strict: true });
      // The same durability as the server's connection: synchronous is per connection.
      db.run("PRAGMA journal_mode = WAL");
      db.run("PRAGMA synchronous = FULL");
      db.run("PRAGMA busy_timeout = 5000");
      stmts = prepare(db);
    }
    reply = { batch: data.batch, outcomes: commitBatch(db, stmts!, data.writes) };
  } catch (error) {
    reply = { batch: data.batch, failed: error instanceof Error ? error.message : String(error) };
  }
  self.postMessage(reply);
};
