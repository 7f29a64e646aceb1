/**
 * Test support. What a test file's tests leave behind, undone after each
 * test: call `cleanupAfterEach` once at a test file's top level; each test
 * pushes onto `cleanups` (run after it, the last pushed first) and takes
 * fresh directories from `tempDir()` (removed the same way). And the
 * ValidationError a call is refused with, and a collector record to render for.
 */
import { afterEach } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Collector } from "../shared/collectors.ts";
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

/** A pending collector record named after its id, with no tags or environment: what a render test renders for. */
export function collectorRecord(id: string, managementMode: Collector["managementMode"] = "opamp"): Collector {
  const at = "2026-01-01T00:00:00.000Z";
  return { id, name: id, environment: null, managementMode, tags: {}, status: "pending", lastSeen: null, health: null, createdAt: at, updatedAt: at };
}
