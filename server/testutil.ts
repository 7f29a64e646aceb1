/**
 * Test support. What a test file's tests leave behind, undone after each
 * test: call `cleanupAfterEach` once at a test file's top level; each test
 * pushes onto `cleanups` (run after it, the last pushed first) and takes
 * fresh directories from `tempDir()` (removed the same way). And the
 * ValidationError a call is refused with.
 */
import { afterEach } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ValidationError } from "./errors.ts";

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

/** The ValidationError `run` throws; any other error is rethrown, and a `run` that returns fails the test. */
export function refusal(run: () => unknown): ValidationError {
  try {
    run();
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  throw new Error("expected a ValidationError");
}
