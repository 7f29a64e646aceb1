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
 * contact takes a second or two), and the test waits it out. The supervisor restarts on the same files;
 * the restart command svc sends afterwards is delivered only over a session its
 * expired token opened again, and restarts the collector.
 */
import { afterAll, afterEach, expect, test } from "bun:test";
import { RESTART_REQUESTS } from "../../server/collectors/restarts.ts";
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
  "over $transport, a supervisor restarted after its enrollment token expired reconnects as the same collector, and a second instance cannot use that token",
  async ({ transport, env }) => {
    const port = freePort();
    server = await startTestServer({ SVC_LISTEN: `127.0.0.1:${port}`, SVC_EXTERNALURL: `http://127.0.0.1:${port}`, ...env });
    supervised = await supervise(server.base, call, { transport, expiresIn: EXPIRES_IN });
    const collector = await enrolled(call, supervised);
    const [token] = (await call<{ items: { expiresAt: string; boundInstanceUid: string | null }[] }>("/enrollment-tokens")).items;
    expect(token!.boundInstanceUid).not.toBeNull();

    // Its expiry passes (the session it opened before it was bound ends then, and the supervisor dials again).
    await until(async () => Date.now() > Date.parse(token!.expiresAt) + 1000, LONG, 500, "the enrollment token's expiry");
    const before = supervised.starts();
    await supervised.restart();
    await until(async () => supervised!.starts() > before, LONG, 200, "the restarted supervisor's collector process").catch((error) =>
      Promise.reject(new Error(`${error}\n${supervised!.log()}`)),
    );
    // The restart command goes out only over a session its credential opened: delivered, it restarts the collector.
    const running = supervised.starts();
    await call(`/collectors/${collector.id}/restart`, "POST");
    await until(async () => (await server.app.store.get<{ deliveredAt?: string }>(RESTART_REQUESTS, collector.id))?.data.deliveredAt, LONG, 200, "the restart command's delivery").catch(
      (error) => Promise.reject(new Error(`${error}\n${supervised!.log()}`)),
    );
    await until(async () => supervised!.starts() > running, LONG, 200, "the collector's restart");
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
