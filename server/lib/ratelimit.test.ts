import { expect, test } from "bun:test";
import { RateLimiter } from "./ratelimit.ts";

test("a key gets its burst at once, then perSecond, and is told how long to wait", () => {
  const limiter = new RateLimiter({ perSecond: 2, burst: 3 });
  expect([0, 1, 2, 3].map(() => limiter.take("a", 0))).toEqual([0, 0, 0, 1]);
  expect(limiter.take("b", 0)).toBe(0); // keys are separate
  expect(limiter.take("a", 499)).toBe(1);
  expect(limiter.take("a", 500)).toBe(0); // one token back after half a second at 2/s
  expect(limiter.take("a", 500)).toBe(1);
  expect([0, 1, 2, 3].map(() => limiter.take("a", 60_000))).toEqual([0, 0, 0, 1]); // refills to the burst, not beyond
});

test("Retry-After rounds up to whole seconds at slow rates", () => {
  const limiter = new RateLimiter({ perSecond: 0.1, burst: 1 });
  expect(limiter.take("a", 0)).toBe(0);
  expect(limiter.take("a", 0)).toBe(10);
  expect(limiter.take("a", 5000)).toBe(5);
});

test("check does not take; an unknown key is allowed", () => {
  const limiter = new RateLimiter({ perSecond: 1, burst: 1 });
  expect(limiter.check("a", 0)).toBe(0);
  expect(limiter.check("a", 0)).toBe(0);
  expect(limiter.take("a", 0)).toBe(0);
  expect(limiter.check("a", 0)).toBe(1);
  expect(limiter.check("a", 1000)).toBe(0);
});
