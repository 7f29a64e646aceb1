/**
 * Issue 26 finding 12: a log-in costs ~100+ ms of argon2, so a flood of bad
 * log-ins used to queue hashes without bound. Now password checks run a few
 * at a time (excess: 503 overloaded with Retry-After, at once), each address
 * has a password-attempt rate and each username a failed-log-in rate (429
 * with Retry-After, before any hash). The flood comes through a trusted proxy
 * from many forwarded addresses, so the per-address rate alone cannot absorb
 * it. It goes on until the probes are answered, so they are answered while
 * every hashing slot is taken; nothing here is timed (a stuck probe fails at
 * its own deadline, naming it), so a busy machine only makes it slower.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../harness.ts";
import { until } from "../opamp/helpers.ts";

let server: TestServer;
let admin: { username: string; password: string };

beforeAll(async () => {
  server = await startTestServer({
    SVC_HTTP_TRUSTEDPROXIES: "127.0.0.1",
    SVC_RATELIMIT_AUTHFAILURES_BURST: "1000000",
    // Small enough that one address's burst is plain to see; the flood sends one log-in per address.
    SVC_RATELIMIT_PASSWORDS_PERSECOND: "1",
    SVC_RATELIMIT_PASSWORDS_BURST: "5",
    // One failed log-in back per minute, so no token returns while a test sends its few (seconds, even on a busy machine).
    SVC_RATELIMIT_LOGINFAILURES_PERMINUTE: "1",
  });
  admin = await server.uiAdmin();
});
afterAll(() => server.stop());

/**
 * Longest any one request may go unanswered. A log-in queued behind the few
 * hashing slots waits for a handful of hashes; on a machine busy with other
 * work each can take seconds. An unbounded queue would hold answers for as
 * long as the flood lasts: that, not speed, is what this tells apart.
 */
const ANSWER_DEADLINE_MS = 60_000;

function login(username: string, password: string, from: string): Promise<Response> {
  return fetch(`${server.base}/api/v1/session`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Forwarded-For": `${from}, 127.0.0.1` },
    body: JSON.stringify({ username, password }),
    signal: AbortSignal.timeout(ANSWER_DEADLINE_MS),
  });
}

interface Answer {
  status: number;
  retryAfter: string | null;
  code: string | null;
}

async function answer(what: string, send: () => Promise<Response>): Promise<Answer> {
  let res: Response;
  try {
    res = await send();
  } catch (error) {
    throw new Error(`${what} was not answered within ${ANSWER_DEADLINE_MS / 1000} s: ${(error as Error).message}`);
  }
  const text = await res.text();
  const code = res.status >= 400 ? ((JSON.parse(text) as { error: { code: string } }).error.code ?? null) : null;
  return { status: res.status, retryAfter: res.headers.get("retry-after"), code };
}

/** `attackers` loops of bad log-ins, each from its own forwarded address and username, until stopped. */
function flood(attackers: number) {
  const answers: Answer[] = [];
  let sent = 0;
  let stopped = false;
  const loops = Array.from({ length: attackers }, async () => {
    try {
      while (!stopped) {
        const n = sent++;
        const from = `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
        answers.push(await answer(`bad log-in ${n} of the flood`, () => login(`nobody-${n}`, "wrong-password-guess", from)));
      }
    } catch (error) {
      stopped = true; // one unanswered log-in ends the flood; stop() reports it
      throw error;
    }
  });
  for (const loop of loops) loop.catch(() => {});
  const overloaded = () => answers.filter((a) => a.status === 503).length;
  return {
    answers,
    overloaded,
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

describe("a flood of bad log-ins from many addresses", () => {
  test(
    "is refused at once past a few hashes, while /healthz, the API and a real log-in are answered",
    async () => {
      // More attackers than the gate has slots and queue places (slots + 4 × slots), so some are always turned away.
      const attack = flood(16);
      const probes: Answer[] = [];
      let real: Answer;
      try {
        // Every hashing slot is taken once the flood is being turned away.
        await until(async () => attack.overloaded() > 0, ANSWER_DEADLINE_MS, 20, "the flood's first 503");
        for (let i = 0; i < 5; i++) {
          probes.push(await answer("/healthz during the flood", () => fetch(`${server.base}/healthz`, { signal: AbortSignal.timeout(ANSWER_DEADLINE_MS) })));
          probes.push(await answer("GET /collectors during the flood", () => server.api("/collectors", { signal: AbortSignal.timeout(ANSWER_DEADLINE_MS) })));
        }
        real = await answer("the real user's log-in during the flood", () => login(admin.username, admin.password, "192.0.2.10"));
        // The flood was still being turned away after the probes: they were answered beside it, not after it.
        const refusedSoFar = attack.overloaded();
        await until(async () => attack.overloaded() > refusedSoFar, ANSWER_DEADLINE_MS, 20, "a 503 to the flood after the probes");
      } finally {
        await attack.stop();
      }

      expect(probes.map((p) => p.status)).toEqual(Array(10).fill(200));
      // The real user is answered, not queued behind the flood: logged in, or told to retry (the flood holds every hashing slot).
      expect(real.status === 200 || (real.status === 503 && real.retryAfter !== null)).toBe(true);

      const statuses = Map.groupBy(attack.answers, (a) => a.status);
      expect([...statuses.keys()].sort()).toEqual([401, 503]);
      const overloaded = statuses.get(503)!;
      expect(overloaded.every((a) => a.code === "overloaded" && Number(a.retryAfter) >= 1)).toBe(true);
      // Most of the flood is turned away without hashing; what is hashed is a few slots' worth.
      expect(overloaded.length).toBeGreaterThan(attack.answers.length / 2);

      // Once the flood has drained the real user logs in.
      expect((await login(admin.username, admin.password, "192.0.2.10")).status).toBe(200);
    },
    4 * ANSWER_DEADLINE_MS,
  );
});

describe("throttles", () => {
  test(
    "one address: past its burst of password attempts, 429 with Retry-After before any hash, the right password too",
    async () => {
      const from = "203.0.113.50";
      // Twelve at once against a burst of 5: the rest arrive before a token is back (1 a second).
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) => answer(`log-in ${i} of 12 from one address`, () => login(admin.username, admin.password, from))),
      );
      const limited = answers.filter((a) => a.status === 429);
      expect(limited.length).toBeGreaterThanOrEqual(6);
      expect(limited.every((a) => a.code === "rate_limited" && Number(a.retryAfter) >= 1)).toBe(true);
      expect(answers.filter((a) => a.status !== 429).every((a) => a.status === 200)).toBe(true);
      // Another address is not held back.
      expect((await login(admin.username, admin.password, "203.0.113.51")).status).toBe(200);
    },
    2 * ANSWER_DEADLINE_MS,
  );

  test(
    "one username: past its burst of failures from many addresses, 429 for that username only",
    async () => {
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
    },
    2 * ANSWER_DEADLINE_MS,
  );
});
