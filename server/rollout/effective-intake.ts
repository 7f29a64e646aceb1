/**
 * Which effective-config reports are looked at, for both channels
 * (`TargetDelivery.setEffective`). A collector repeats its effective config often
 * (the OpAMP supervisor at each connect and status change, Alloy with every
 * poll), so a report equal to the last one kept costs nothing and counts
 * against nothing. A changed one is looked at within the collector's rate;
 * past it the report is not read, and until a later one is kept the config
 * svc holds is known to be older than what the collector runs, so drift is
 * not judged on it (`pending`).
 */
import { createHash } from "node:crypto";
import type { EffectiveConfig } from "./records.ts";
import { RateLimiter } from "../lib/ratelimit.ts";

/**
 * Most bytes (UTF-8: every file's name, content type and body) one
 * effective-config report may hold to be kept: a collector's config is tens of
 * KiB, and reading one for drift costs microseconds a byte. Well below the
 * channels' 4 MiB message limit.
 */
export const MAX_EFFECTIVE_CONFIG_BYTES = 256 * 1024;
/**
 * Changed effective-config reports looked at per collector: a few at once,
 * then one a minute. A real supervisor sends three or four distinct ones
 * when it connects and applies its first config (test/supervisor/real.test.ts),
 * and one more per config it applies.
 */
export const EFFECTIVE_CONFIG_RATE = { burst: 8, perSecond: 1 / 60 };

/** What became of an effective-config report: kept, the same as the one kept, refused (the reason kept beside the last one kept), or not looked at (over the rate). */
export type EffectiveIntake = "stored" | "unchanged" | "refused" | "limited";

type Files = EffectiveConfig["files"];

/** The decision on one report, before anything is written. */
export type Admission = { kind: "unchanged" } | { kind: "limited" } | { kind: "refused"; bytes: number } | { kind: "keep"; digest: string };

function reportBytes(files: Files): number {
  return files.reduce((sum, f) => sum + Buffer.byteLength(f.name) + Buffer.byteLength(f.contentType) + Buffer.byteLength(f.body), 0);
}

function digestOf(files: Files): string {
  const hash = createHash("sha256");
  for (const f of files) hash.update(`${f.name.length}:${f.name}${f.contentType.length}:${f.contentType}${f.body.length}:`).update(f.body);
  return hash.digest("base64");
}

export class EffectiveIntakeGate {
  private readonly rate = new RateLimiter(EFFECTIVE_CONFIG_RATE);
  /** Per collector, the digest of the report last kept (memory only: after a restart the first report is kept again). */
  private readonly kept = new Map<string, string>();
  /** Collectors that sent a changed report not read yet: what is kept for them is older than what they run. */
  private readonly waiting = new Set<string>();

  /** Decides on a report; `onWaitingChanged` runs when the collector turns waiting, or stops waiting without a new report kept. */
  admit(collectorId: string, files: Files, onWaitingChanged: () => void): Admission {
    const bytes = reportBytes(files);
    const digest = bytes <= MAX_EFFECTIVE_CONFIG_BYTES ? digestOf(files) : null;
    if (digest !== null && digest === this.kept.get(collectorId)) {
      if (this.waiting.delete(collectorId)) onWaitingChanged();
      return { kind: "unchanged" };
    }
    if (this.rate.take(collectorId) > 0) {
      if (!this.waiting.has(collectorId)) {
        this.waiting.add(collectorId);
        onWaitingChanged();
      }
      return { kind: "limited" };
    }
    if (digest === null) return { kind: "refused", bytes };
    return { kind: "keep", digest };
  }

  /** The report was written: it is what the collector runs now. */
  stored(collectorId: string, digest: string): void {
    this.kept.set(collectorId, digest);
    this.waiting.delete(collectorId);
  }

  /** Whether a changed report is waiting to be read (then the kept one is out of date). */
  pending(collectorId: string): boolean {
    return this.waiting.has(collectorId);
  }

  /** Whether a report sent now would be looked at: a channel that skipped one asks for it again then. */
  welcome(collectorId: string): boolean {
    return this.rate.check(collectorId) === 0;
  }
}
