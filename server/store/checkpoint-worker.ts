/**
 * The worker side of checkpointer.ts: its own connection to the state file,
 * copying the WAL's frames into the database file every `everyMs` (a passive
 * checkpoint: it never waits for, nor holds up, the server's writes and reads).
 */
import { Database } from "bun:sqlite";
import type { CheckpointReply, CheckpointRequest } from "./checkpointer.ts";

declare const self: Worker;

let db: Database | null = null;
let timer: ReturnType<typeof setInterval> | undefined;
/** A failure is told once until a checkpoint succeeds again: the server's own checkpoints go on meanwhile. */
let failing = false;

const reply = (message: CheckpointReply) => self.postMessage(message);

self.onmessage = ({ data }: MessageEvent<CheckpointRequest>) => {
  if (data.kind === "close") {
    clearInterval(timer);
    db?.close();
    db = null;
    return reply({ kind: "closed" });
  }
  try {
    db = new Database(data.path, { readwrite: true, create: false, strict: true });
  } catch (error) {
    return reply({ kind: "failed", message: (error as Error).message });
  }
  timer = setInterval(() => {
    try {
      db?.run("PRAGMA wal_checkpoint(PASSIVE)");
      failing = false;
    } catch (error) {
      if (!failing) reply({ kind: "failed", message: (error as Error).message });
      failing = true;
    }
  }, data.everyMs);
};
