import { afterAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { storeContract } from "./contract.ts";
import { SqliteStore } from "./sqlite.ts";

const dir = mkdtempSync(join(tmpdir(), "svc-sqlite-"));
let n = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

storeContract("sqlite", {
  open: async () => new SqliteStore(join(dir, `nested/${n++}/state.db`)),
  reopen: async (previous) => new SqliteStore((previous as SqliteStore).path),
});
