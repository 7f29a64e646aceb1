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
import { COLLECTOR_STATUSES } from "../shared/collector-status.ts";
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

/** A deterministic random source for a randomized test (a failure replays with its seed), and a pick from a list by it. */
export function seeded(seed: number): { random: () => number; pick: <T>(items: readonly T[]) => T } {
  let state = seed;
  const random = () => (state = (state * 1103515245 + 12345) & 0x7fffffff) / 0x80000000;
  return { random, pick: (items) => items[Math.floor(random() * items.length)]! };
}

/**
 * A collector record with a random status and health (none; or healthy, saying it accepts remote
 * config, that it does not, or nothing): for tests that hold kept counts against a recount.
 */
export function randomCollector(id: string, { random, pick }: ReturnType<typeof seeded>, fields: Partial<Collector> = {}): Collector {
  return {
    id,
    name: id,
    environment: null,
    managementMode: "opamp",
    tags: {},
    status: pick(COLLECTOR_STATUSES),
    lastSeen: null,
    health:
      random() < 0.3
        ? null
        : { channel: "opamp", intervalSeconds: 30, healthy: true, error: null, ...(random() < 0.5 ? { acceptsRemoteConfig: random() < 0.5 } : {}) },
    createdAt: "",
    updatedAt: "",
    ...fields,
  };
}
