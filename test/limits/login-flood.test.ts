/**
 * Issue 26 finding 12: a log-in costs ~100+ ms of argon2, so a flood of bad
 * log-ins used to queue hashes without bound. Now password checks run a few
 * at a time (excess: 503 overloaded with Retry-After, at once), each address
 * has a password-attempt rate and each username a failed-log-in rate (429
 * with Retry-After, before any hash). The flood comes through a trusted proxy
 * from many forwarded addresses, so the per-address rate alone cannot absorb
 * it. Latency bounds are generous (seconds, where an unbounded queue takes
 * tens): they tell "answered" from "stuck behind the flood", not speed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../harness.ts";

let server: TestServer;
let admin: { username: string; password: string };

beforeAll(async () => {
  server = await startTestServer({
    SVC_HTTP_TRUSTEDPROXIES: "127.0.0.1",
    SVC_RATELIMIT_AUTHFAILURES_BURST: "1000000",
    // Small enough that one address's burst is plain to see; the flood sends at most 2 per address.
    SVC_RATELIMIT_PASSWORDS_PERSECOND: "1",
    SVC_RATELIMIT_PASSWORDS_BURST: "5",
  });
  admin = await server.uiAdmin();
});
afterAll(() => server.stop());

function login(username: string, password: string, from: string): Promise<Response> {
  return fetch(`${server.base}/api/v1/session`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Forwarded-For": `${from}, 127.0.0.1` },
    body: JSON.stringify({ username, password }),
  });
}

async function timed(send: () => Promise<Response>): Promise<{ ms: number; status: number; retryAfter: string | null; code: string | null }> {
  const started = performance.now();
  const res = await send();
  const text = await res.text();
  const code = res.status >= 400 ? ((JSON.parse(text) as { error: { code: string } }).error.code ?? null) : null;
  return { ms: performance.now() - started, status: res.status, retryAfter: res.headers.get("retry-after"), code };
}

describe("a flood of bad log-ins from many addresses", () => {
  test("is refused fast past a few hashes at once, while /healthz, the API and a real log-in stay answered", async () => {
    const flood = Array.from({ length: 400 }, (_, i) => timed(() => login(`nobody-${i}`, "wrong-password-guess", `198.51.100.${i % 250}`)));
    // Let the flood arrive, then probe while it is being worked through.
    await Bun.sleep(50);
    const probes: { what: string; ms: number; status: number }[] = [];
    for (let i = 0; i < 5; i++) {
      for (const [what, send] of [
        ["/healthz", () => fetch(`${server.base}/healthz`)],
        ["GET /collectors", () => server.api("/collectors")],
      ] as const) {
        const { ms, status } = await timed(send);
        probes.push({ what, ms, status });
      }
    }
    const real = await timed(() => login(admin.username, admin.password, "192.0.2.10"));
    const answers = await Promise.all(flood);

    expect(probes.map((p) => p.status)).toEqual(Array(10).fill(200));
    expect(probes.filter((p) => p.ms > 1000)).toEqual([]);
    // The real user is answered at once: logged in, or told to retry (the flood holds every hashing slot).
    expect(real.ms).toBeLessThan(3000);
    expect(real.status === 200 || (real.status === 503 && real.retryAfter !== null)).toBe(true);

    const statuses = Map.groupBy(answers, (a) => a.status);
    expect([...statuses.keys()].sort()).toEqual([401, 503]);
    const overloaded = statuses.get(503)!;
    expect(overloaded.every((a) => a.code === "overloaded" && Number(a.retryAfter) >= 1)).toBe(true);
    // Most of the flood is turned away without hashing; what is hashed is a few slots' worth.
    expect(overloaded.length).toBeGreaterThan(answers.length / 2);
    expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(10_000);

    // Once the flood has drained the real user logs in.
    expect((await login(admin.username, admin.password, "192.0.2.10")).status).toBe(200);
  }, 60_000);
});

describe("throttles", () => {
  test("one address: past its burst of password attempts, 429 with Retry-After before any hash, the right password too", async () => {
    const from = "203.0.113.50";
    // Twelve at once against a burst of 5: the rest arrive before a token is back (1 a second).
    const answers = await Promise.all(Array.from({ length: 12 }, () => timed(() => login(admin.username, admin.password, from))));
    const limited = answers.filter((a) => a.status === 429);
    expect(limited.length).toBeGreaterThanOrEqual(6);
    expect(limited.every((a) => a.code === "rate_limited" && Number(a.retryAfter) >= 1)).toBe(true);
    expect(answers.filter((a) => a.status !== 429).every((a) => a.status === 200)).toBe(true);
    // Another address is not held back.
    expect((await login(admin.username, admin.password, "203.0.113.51")).status).toBe(200);
  }, 30_000);

  test("one username: past its burst of failures from many addresses, 429 for that username only", async () => {
    const victim = "admin";
    const answers: number[] = [];
    for (let i = 0; i < 15; i++) answers.push((await login(victim, "wrong-password-guess", `100.64.0.${i + 1}`)).status);
    expect(answers.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(answers.slice(10)).toEqual(Array(5).fill(429));
    const held = await login(victim, admin.password, "100.64.1.1");
    expect(held.status).toBe(429);
    expect(Number(held.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // Unknown and other usernames are counted on their own.
    expect((await login("someone-else", "wrong-password-guess", "100.64.1.2")).status).toBe(401);
    const audit = await server.call<{ items: { outcome: string; details: { username: string } }[] }>("/audit?action=session.login");
    expect(audit.items.filter((e) => e.outcome === "failure" && e.details.username === victim)).toHaveLength(10);
  }, 30_000);
});
