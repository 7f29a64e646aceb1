/**
 * The enrollment token in install.sh's supervisor config, after it expires.
 * The real supervisor (v0.149.0) dials with the token in its config file at
 * every start: it keeps connection settings svc offers in memory only
 * (supervisor.go onOpampConnectionSettings), and svc's supervisor config does
 * not take them. So once the token is bound to the supervisor's instance it
 * must stay that instance's credential past its expiry, or every installed
 * collector would be cut off at its first reconnect a day after install.
 *
 * The token is made to live 20 s: the supervisor enrolls within it (a first
 * contact takes a second or two), and the test waits it out. The supervisor
 * restarts on the same files; svc seeing it again, online, after the restart
 * is the proof that its expired token opened a session.
 */
import { afterAll, afterEach, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../harness.ts";
import { until } from "../opamp/helpers.ts";
import { freePort, removeTempDirs } from "../process/spawn.ts";
import { enrolled, LONG, supervise, TRANSPORTS, type Supervised } from "./supervised.ts";

let server: TestServer;
let supervised: Supervised | null = null;

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

/** Long enough for the supervisor's first contact on a busy machine, short enough to wait out. */
const EXPIRES_IN = 20;

afterEach(async () => {
  await supervised?.stop();
  supervised = null;
  await server?.stop();
});
afterAll(removeTempDirs);

test.each(TRANSPORTS)(
  "over $transport, a supervisor restarted after its enrollment token expired is seen again as the same collector, and a second instance cannot use that token",
  async ({ transport, env }) => {
    const port = freePort();
    server = await startTestServer({ SVC_LISTEN: `127.0.0.1:${port}`, SVC_EXTERNALURL: `http://127.0.0.1:${port}`, ...env });
    supervised = await supervise(server.base, call, { transport, expiresIn: EXPIRES_IN });
    const collector = await enrolled(call, supervised);
    const [token] = (await call<{ items: { expiresAt: string; boundInstanceUid: string | null }[] }>("/enrollment-tokens")).items;
    expect(token!.boundInstanceUid).not.toBeNull();

    // Its expiry passes (the session it opened before it was bound ends then, and the supervisor dials again).
    await until(async () => Date.now() > Date.parse(token!.expiresAt) + 1000, LONG, 500, "the enrollment token's expiry");
    await supervised.restart();
    // Every contact after this is the new supervisor's, over a session its expired token opened.
    const restartedAt = new Date().toISOString();
    await until(
      async () => {
        const seen = await call<{ lastSeen: string | null; status: string }>(`/collectors/${collector.id}`);
        return seen.lastSeen !== null && seen.lastSeen > restartedAt && seen.status === "online";
      },
      LONG,
      200,
      "a contact from the restarted supervisor",
    ).catch((error) => Promise.reject(new Error(`${error}\n${supervised!.log()}`)));
    const opamp = (await call<{ items: { id: string; managementMode: string }[] }>("/collectors")).items.filter((c) => c.managementMode === "opamp");
    expect(opamp.map((c) => c.id)).toEqual([collector.id]);

    // Bound, it speaks for its own instance only: another instance_uid is refused, expired or not.
    const other = await fetch(`${server.base}/v1/opamp`, {
      method: "POST",
      headers: { Authorization: `Bearer ${supervised.token}`, "Content-Type": "application/x-protobuf" },
      body: new Uint8Array([0x0a, 0x10, ...crypto.getRandomValues(new Uint8Array(16))]),
    });
    expect(other.status).toBe(401);
  },
  240_000,
);
