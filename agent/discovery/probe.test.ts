/**
 * The metrics probe against real listeners on loopback: HTTP and HTTPS servers,
 * a closed port, a peer that speaks no HTTP and one that never answers.
 */
import { afterAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { until, within } from "../../test/opamp/helpers.ts";
import { probeMetrics } from "./probe.ts";

const TLS_DIR = join(import.meta.dir, "../../test/agents/tls");
const metrics = (request: Request) => (new URL(request.url).pathname === "/metrics" ? new Response("up 1\n") : new Response("", { status: 404 }));
const http = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: metrics });
const https = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  tls: { cert: readFileSync(join(TLS_DIR, "cert.pem"), "utf8"), key: readFileSync(join(TLS_DIR, "key.pem"), "utf8") },
  fetch: metrics,
});
/** Accepts and answers `greeting`, or nothing when it is null. */
const raw = (greeting: string | null) =>
  Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { open: (s) => void (greeting !== null && s.write(greeting)), data: () => {} } });
const garbage = raw("SSH-2.0-OpenSSH_9.6\r\n");
/** What the peer that never answers was sent, and whether the prober hung up on it. */
const heard = { data: "", closed: false };
const silent = Bun.listen({
  hostname: "127.0.0.1",
  port: 0,
  socket: { data: (_s, chunk) => void (heard.data += chunk.toString("latin1")), close: () => void (heard.closed = true) },
});
const closed = raw(null);
const closedPort = closed.port;
closed.stop(true);

afterAll(() => {
  for (const server of [http, https]) server.stop(true);
  for (const listener of [garbage, silent]) listener.stop(true);
});

test("a 2xx status line is alive; any other status is not", async () => {
  expect(await probeMetrics(`http://127.0.0.1:${http.port}/metrics`)).toBe(true);
  expect(await probeMetrics(`http://127.0.0.1:${http.port}/other`)).toBe(false);
});

test("https is probed without checking the certificate", async () => {
  expect(await probeMetrics(`https://127.0.0.1:${https.port}/metrics`)).toBe(true);
  expect(await probeMetrics(`https://localhost:${https.port}/other`)).toBe(false);
});

test("a closed port, a peer that speaks no HTTP and a bad URL are not alive", async () => {
  expect(await probeMetrics(`http://127.0.0.1:${closedPort}/metrics`)).toBe(false);
  expect(await probeMetrics(`http://127.0.0.1:${garbage.port}/metrics`)).toBe(false);
  expect(await probeMetrics("ftp://127.0.0.1/metrics")).toBe(false);
  expect(await probeMetrics("not a url")).toBe(false);
});

test("a peer that never answers is asked, given up on after the probe timeout and hung up on", async () => {
  expect(await within(probeMetrics(`http://127.0.0.1:${silent.port}/metrics`), 30_000, "the probe of a peer that never answers")).toBe(false);
  expect(heard.data).toStartWith("GET /metrics HTTP/1.1\r\n");
  await until(async () => heard.closed, 10_000, 20, "the prober hanging up on the silent peer");
});
