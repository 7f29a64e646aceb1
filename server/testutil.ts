/**
 * Test support: what a test file's tests leave behind, undone after each
 * test. Call `cleanupAfterEach` once at a test file's top level; each test
 * pushes onto `cleanups` (run after it, the last pushed first) and takes
 * fresh directories from `tempDir()` (removed the same way).
 */
import { afterEach } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export type Cleanup = () => Promise<void> | void;

export function cleanupAfterEach(prefix: string): { cleanups: Cleanup[]; tempDir(): string } {
  const cleanups: Cleanup[] = [];
  afterEach(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });
  return {
    cleanups,
    tempDir() {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      return dir;
    },
  };
}
