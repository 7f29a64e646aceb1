/**
 * Durability of the real server process: an acknowledged write survives
 * kill -9 at any moment, and SIGTERM drains in-flight requests, answers them
 * completely, closes the store and exits 0.
 */
import type { Socket } from "bun";
import { Database } from "bun:sqlite";
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { api, bootstrapToken, isListening, killAll, removeTempDirs, startServer, tempDir } from "./spawn.ts";

afterEach(killAll);
afterAll(async () => {
  await killAll();
  removeTempDirs();
});

interface Collector {
  id: string;
  name: string;
}

type Outcome = { kind: "acked"; collector: Collector } | { kind: "answered"; status: number; body: string } | { kind: "failed"; error: string };

/** A raw TCP connection for hand-written HTTP: what has arrived so far, and when it closed. */
async function rawConnection(port: number) {
  const raw = { response: "", socketClosed: undefined as unknown as Promise<void>, socket: undefined as unknown as Socket };
  let closed!: () => void;
  raw.socketClosed = new Promise<void>((resolve) => (closed = resolve));
  raw.socket = await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      data(_s, chunk) {
        raw.response += chunk.toString("utf8");
      },
      close: () => closed(),
      error: () => closed(),
    },
  });
  return raw;
}

/** One create; an ack counts only when the whole 201 body arrived and parsed. */
async function create(base: string, token: string, name: string): Promise<Outcome> {
  try {
    const res = await api(base, token, "/collectors", { method: "POST", json: { name } });
    const body = await res.text();
    if (res.status !== 201) return { kind: "answered", status: res.status, body };
    const collector = JSON.parse(body) as Collector;
    if (typeof collector.id !== "string" || collector.name !== name) return { kind: "answered", status: res.status, body };
    return { kind: "acked", collector };
  } catch (error) {
    return { kind: "failed", error: String(error) };
  }
}

/** Reads every collector back and returns those that are missing or wrong. */
async function missing(base: string, token: string, expected: Collector[]): Promise<string[]> {
  const problems: string[] = [];
  const queue = [...expected];
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let c = queue.shift(); c; c = queue.shift()) {
        const res = await api(base, token, `/collectors/${c.id}`);
        if (res.status !== 200) {
          problems.push(`${c.id} (${c.name}): ${res.status}`);
          continue;
        }
        const got = (await res.json()) as Collector;
        if (got.id !== c.id || got.name !== c.name) problems.push(`${c.id}: read back as ${JSON.stringify(got)}`);
      }
    }),
  );
  return problems;
}

/** All collector ids, following the cursor. */
async function listIds(base: string, token: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const res = await api(base, token, `/collectors?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    expect(res.status).toBe(200);
    const page = (await res.json()) as { items: Collector[]; nextCursor: string | null };
    ids.push(...page.items.map((c) => c.id));
    cursor = page.nextCursor;
  } while (cursor !== null);
  return ids;
}

function integrityCheck(path: string): string {
  const db = new Database(path, { readonly: true });
  try {
    return db.query<{ integrity_check: string }, []>("PRAGMA integrity_check").get()!.integrity_check;
  } finally {
    db.close();
  }
}

/** Quiet logs, and a rate limit above what these deliberate write floods from one token need (limits are tested in test/limits/). */
const quiet = { SVC_LOGGING_LEVEL: "warn", SVC_RATELIMIT_API_PERSECOND: "100000", SVC_RATELIMIT_API_BURST: "100000" };

describe("kill -9", () => {
  test("every acknowledged create is there after a restart", async () => {
    const dir = tempDir();
    const statePath = join(dir, "state.db");
    const token = bootstrapToken();
    const env = { ...quiet, SVC_BOOTSTRAP_ADMINTOKEN: token };

    const first = await startServer({ statePath, env });
    // A configured token is never printed.
    expect(first.bannerToken).toBeNull();
    expect(first.stdout()).not.toContain("svcsa_");

    const acked: Collector[] = [];
    const N = 120;
    let next = 0;
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        while (next < N) {
          const name = `durable-${next++}`;
          const outcome = await create(first.base, token, name);
          if (outcome.kind !== "acked") throw new Error(`create ${name}: ${JSON.stringify(outcome)}`);
          acked.push(outcome.collector);
        }
      }),
    );
    // Killed right after the last acknowledgement, with no chance to close the store.
    first.proc.kill("SIGKILL");
    expect(await first.exited).not.toBe(0);
    expect(first.proc.signalCode).toBe("SIGKILL");
    expect(acked).toHaveLength(N);

    const second = await startServer({ statePath, env });
    expect(second.bannerToken).toBeNull();
    expect(second.stdout()).not.toContain("svcsa_");
    expect(await missing(second.base, token, acked)).toEqual([]);
    expect((await listIds(second.base, token)).sort()).toEqual(acked.map((c) => c.id).sort());
    expect(await second.stop("SIGTERM")).toBe(0);
    expect(integrityCheck(statePath)).toBe("ok");
  }, 30_000);

  test("SIGKILL at a random moment during concurrent writes loses no acknowledged write (5 rounds)", async () => {
    const dir = tempDir();
    const statePath = join(dir, "state.db");
    const token = bootstrapToken();
    const env = { ...quiet, SVC_BOOTSTRAP_ADMINTOKEN: token };
    const acked: Collector[] = [];
    let unanswered = 0;

    for (let round = 0; round < 5; round++) {
      const server = await startServer({ statePath, env });
      // The store from the previous (killed) round opened, and everything acknowledged so far is there.
      expect(await missing(server.base, token, acked)).toEqual([]);

      let stop = false;
      let roundAcks = 0;
      const writers = Array.from({ length: 8 }, async (_, w) => {
        for (let i = 0; !stop; i++) {
          const outcome = await create(server.base, token, `r${round}-w${w}-${i}`);
          if (outcome.kind === "acked") {
            acked.push(outcome.collector);
            roundAcks++;
          } else if (outcome.kind === "failed") {
            unanswered++;
            stop = true; // the server is gone
          } else {
            throw new Error(`unexpected answer in round ${round}: ${outcome.status} ${outcome.body}`);
          }
        }
      });
      // Let some writes land, then kill at a random moment while writes are in flight.
      const deadline = Date.now() + 10_000;
      while (roundAcks < 5 && Date.now() < deadline) await Bun.sleep(5);
      await Bun.sleep(Math.floor(Math.random() * 250));
      server.proc.kill("SIGKILL");
      await server.exited;
      stop = true;
      await Promise.all(writers);
      expect(server.proc.signalCode).toBe("SIGKILL");
      expect(roundAcks).toBeGreaterThan(0);
      expect(await isListening(server.port)).toBe(false);
    }

    const last = await startServer({ statePath, env });
    expect(await missing(last.base, token, acked)).toEqual([]);
    const ids = new Set(await listIds(last.base, token));
    // Writes without an answer may or may not have landed; nothing else may appear.
    expect(ids.size).toBeGreaterThanOrEqual(acked.length);
    expect(ids.size).toBeLessThanOrEqual(acked.length + unanswered);
    const health = await api(last.base, token, "/system/health");
    expect(health.status).toBe(200);
    expect(((await health.json()) as { status: string }).status).toBe("ok");
    expect(await last.stop("SIGTERM")).toBe(0);
    expect(integrityCheck(statePath)).toBe("ok");
  }, 45_000);
});

describe("SIGTERM", () => {
  test("drains a request that is mid-body, answers it completely and exits 0", async () => {
    const dir = tempDir();
    const statePath = join(dir, "state.db");
    const token = bootstrapToken();
    const env = { ...quiet, SVC_BOOTSTRAP_ADMINTOKEN: token };
    const server = await startServer({ statePath, env });

    // A raw HTTP request whose body arrives in two parts, with SIGTERM in between.
    const body = JSON.stringify({ name: "drained-slowly" });
    const head =
      `POST /api/v1/collectors HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n` +
      `Authorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`;
    const raw = await rawConnection(server.port);
    const { socket, socketClosed } = raw;
    socket.write(head + body.slice(0, 5));
    await Bun.sleep(300); // the server has the headers and is reading the body

    server.proc.kill("SIGTERM");
    await Bun.sleep(500);
    // Still draining: not exited, no longer accepting new connections.
    expect(server.proc.exitCode).toBeNull();
    expect(await isListening(server.port)).toBe(false);

    socket.write(body.slice(5));
    await Promise.race([socketClosed, Bun.sleep(10_000)]);
    expect(raw.response).toMatch(/^HTTP\/1\.1 201 /);
    const json = JSON.parse(raw.response.slice(raw.response.indexOf("\r\n\r\n") + 4)) as Collector;
    expect(json.name).toBe("drained-slowly");
    expect(await server.exited).toBe(0);

    const again = await startServer({ statePath, env });
    expect(await missing(again.base, token, [json])).toEqual([]);
    expect(await again.stop("SIGTERM")).toBe(0);
  }, 30_000);

  test("an idle keep-alive connection does not hold up shutdown (SIGTERM and SIGINT)", async () => {
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      const dir = tempDir();
      const server = await startServer({ statePath: join(dir, "state.db"), env: quiet });
      const raw = await rawConnection(server.port);
      const { socket, socketClosed } = raw;
      socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n\r\n`);
      const deadline = Date.now() + 5000;
      while (!raw.response.endsWith("ok\n") && Date.now() < deadline) await Bun.sleep(10);
      expect(raw.response).toMatch(/^HTTP\/1\.1 200 /);

      server.proc.kill(signal);
      // Well before the 10 s forced exit (which would exit 1).
      const code = await Promise.race([server.exited, Bun.sleep(5000).then(() => "still running" as const)]);
      expect(code).toBe(0);
      await Promise.race([socketClosed, Bun.sleep(2000)]);
      socket.end();
    }
  }, 30_000);

  test("many concurrent creates: each one stored is answered completely, the process exits 0, state is intact", async () => {
    const dir = tempDir();
    const statePath = join(dir, "state.db");
    const token = bootstrapToken();
    const env = { ...quiet, SVC_BOOTSTRAP_ADMINTOKEN: token };
    const server = await startServer({ statePath, env });

    const outcomes: Promise<Outcome>[] = [];
    let acks = 0;
    for (let i = 0; i < 200; i++) {
      const p = create(server.base, token, `term-${i}`);
      void p.then((o) => o.kind === "acked" && acks++);
      outcomes.push(p);
    }
    const deadline = Date.now() + 10_000;
    while (acks < 10 && Date.now() < deadline) await Bun.sleep(1);
    server.proc.kill("SIGTERM");

    const results = await Promise.all(outcomes);
    expect(await server.exited).toBe(0);
    const answered = results.filter((o) => o.kind === "answered");
    expect(answered).toEqual([]); // no 5xx, no truncated or malformed answer
    const acked = results.flatMap((o) => (o.kind === "acked" ? [o.collector] : []));
    expect(acked.length).toBeGreaterThanOrEqual(10);

    const again = await startServer({ statePath, env });
    expect(await missing(again.base, token, acked)).toEqual([]);
    // Only acknowledged creates were stored: a drain does not drop answers.
    expect((await listIds(again.base, token)).sort()).toEqual(acked.map((c) => c.id).sort());
    expect(await again.stop("SIGTERM")).toBe(0);
    expect(integrityCheck(statePath)).toBe("ok");
  }, 30_000);
});
