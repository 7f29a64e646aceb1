/**
 * Token buckets keyed by credential or address. A key starts with a full
 * bucket of `burst` and regains `perSecond`; a take from an empty bucket
 * reports how long until one is back, for Retry-After. Buckets that have
 * refilled are forgotten, so memory follows the keys active in the last
 * `burst / perSecond` seconds, not every key ever seen.
 */

/** A bucket's size and refill, as config.yaml's `rateLimit.*` sections give them. */
export interface RateLimit {
  perSecond: number;
  burst: number;
}

interface Bucket {
  tokens: number;
  /** performance.now() at the last refill. */
  at: number;
}

/** Past this many live buckets a take sweeps out the full ones. */
const SWEEP_AT = 10_000;

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly limit: RateLimit) {}

  /** Takes one token: 0 when allowed, else the whole seconds to wait (at least 1). */
  take(key: string, now = performance.now()): number {
    const bucket = this.refill(key, now);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return this.wait(bucket);
  }

  /** Like take without taking: whether a token is there now, as seconds to wait (0 when there is). */
  check(key: string, now = performance.now()): number {
    const bucket = this.buckets.get(key);
    if (!bucket) return 0;
    return this.refill(key, now).tokens >= 1 ? 0 : this.wait(bucket);
  }

  private wait(bucket: Bucket): number {
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.limit.perSecond));
  }

  private refill(key: string, now: number): Bucket {
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= SWEEP_AT) this.sweep(now);
      bucket = { tokens: this.limit.burst, at: now };
      this.buckets.set(key, bucket);
      return bucket;
    }
    bucket.tokens = Math.min(this.limit.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.limit.perSecond);
    bucket.at = now;
    return bucket;
  }

  private sweep(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + ((now - bucket.at) / 1000) * this.limit.perSecond >= this.limit.burst) this.buckets.delete(key);
    }
  }
}
