/**
 * Issue 33 item 6: wrong passwords lock a username out only from the address
 * that sent them. Over real sockets from two loopback addresses: a guesser on
 * 127.0.0.2 spends the username's failed log-ins and is answered 429 there
 * even with the right password; the user on 127.0.0.1 still logs in.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { request } from "node:http";
import { startTestServer, type TestServer } from "../harness.ts";

let server: TestServer;
let admin: { username: string; password: string };
beforeAll(async () => {
  server = await startTestServer();
  admin = await server.uiAdmin();
});
afterAll(() => server.stop());

/** POST /api/v1/session from `localAddress`; the status and the error code, if any. */
function login(localAddress: string, username: string, password: string): Promise<{ status: number; code?: string }> {
  const url = new URL(`${server.base}/api/v1/session`);
  const body = JSON.stringify({ username, password });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        localAddress,
        headers: { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () =>
          resolve({ status: res.statusCode!, code: res.statusCode === 200 ? undefined : (JSON.parse(text) as { error: { code: string } }).error.code }),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

test("failed log-ins lock the username out from the guesser's address only", async () => {
  for (let i = 0; i < 10; i++) expect(await login("127.0.0.2", admin.username, `wrong-password-${i}`)).toEqual({ status: 401, code: "invalid_credentials" });
  expect(await login("127.0.0.2", admin.username, admin.password)).toEqual({ status: 429, code: "rate_limited" });
  expect(await login("127.0.0.1", admin.username, admin.password)).toEqual({ status: 200 });
}, 60_000);
