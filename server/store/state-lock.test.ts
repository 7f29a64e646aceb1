import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lockState, StateLockedError } from "./state-lock.ts";

const dir = mkdtempSync(join(tmpdir(), "svc-state-lock-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a held store refuses a second lock, naming the holder; released, it can be taken again", () => {
  const boltPath = join(dir, "state.db");
  const first = lockState(boltPath);
  const refused = (() => {
    try {
      lockState(boltPath);
    } catch (error) {
      return error;
    }
  })();
  expect(refused).toBeInstanceOf(StateLockedError);
  expect((refused as Error).message).toContain(`${boltPath} (storage.boltPath) is in use by another svc server (pid ${process.pid} `);
  first.release();
  lockState(boltPath).release();
});
