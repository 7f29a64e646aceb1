/**
 * Connection limits at the edge: past `http.maxConnections` open requests and
 * WebSockets the answer is 503 with Retry-After while the probes still
 * answer; a client that trickles its headers or its body is dropped (raw TCP
 * sockets, so nothing in between buffers for it).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Socket } from "bun";
import { RawAgent } from "../opamp/helpers.ts";
import { startTestServer, type TestServer } from "../harness.ts";

describe("http.maxConnections", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ SVC_HTTP_MAXCONNECTIONS: "2" });
  });
  afterAll(() => server.stop());

  test("an open event stream and a WebSocket fill it: the next request is 503 with Retry-After, the probes still answer", async () => {
    const { token } = await server.call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp" });
    const events = new AbortController();
    const stream = await fetch(`${server.base}/api/v1/events`, { headers: { Authorization: `Bearer ${server.adminToken}` }, signal: events.signal });
    expect(stream.status).toBe(200);
    const agent = await RawAgent.connect(`${server.base.replace("http", "ws")}/v1/opamp`, token);
    try {
      const refused = await server.api("/collectors");
      expect(refused.status).toBe(503);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("overloaded");
      expect((await fetch(`${server.base}/healthz`)).status).toBe(200);
    } finally {
      agent.ws.close();
      events.abort();
    }
    // Once they are gone the server takes calls again (the close is seen by the server a moment later).
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      status = (await server.api("/collectors")).status;
      if (status !== 200) await Bun.sleep(20);
    }
    expect(status).toBe(200);
  });
});

/** A raw TCP client: what it was sent and when the server dropped it. */
async function rawClient(port: number) {
  const client = { received: "", closed: false, socket: undefined as unknown as Socket };
  client.socket = await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      data(_s, data) {
        client.received += data.toString();
      },
      close() {
        client.closed = true;
      },
    },
  });
  return client;
}

/** Writes `text` a byte at a time, one a second, until the server closes the socket; true when it did. */
async function trickle(client: Awaited<ReturnType<typeof rawClient>>, text: string): Promise<boolean> {
  for (const byte of text) {
    if (client.closed) return true;
    client.socket.write(byte);
    await Bun.sleep(1000);
  }
  return client.closed;
}

describe("slow clients", () => {
  let server: TestServer;
  let port: number;
  beforeAll(async () => {
    server = await startTestServer({ SVC_HTTP_IDLETIMEOUTSECONDS: "2" });
    port = Number(new URL(server.base).port);
  });
  afterAll(() => server.stop());

  test("headers sent a byte a second are dropped before they are complete", async () => {
    const client = await rawClient(port);
    // 40 s of headers at this pace; the server's header deadline (about 10 s) ends it long before.
    const dropped = await trickle(client, `GET /api/v1/collectors HTTP/1.1\r\nHost: x\r\nX-Pad: ${"a".repeat(12)}\r\n\r\n`);
    expect(dropped).toBe(true);
    expect(client.received).not.toContain("200 OK");
  }, 20_000);

  test("a body sent a byte a second is dropped at http.idleTimeoutSeconds", async () => {
    const client = await rawClient(port);
    client.socket.write(
      `POST /api/v1/service-accounts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.adminToken}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`,
    );
    const dropped = await trickle(client, "x".repeat(15));
    expect(dropped).toBe(true);
    expect(client.received).not.toContain("201 Created");
    // Nothing was created from the half-sent body.
    const { items } = await server.call<{ items: unknown[] }>("/service-accounts");
    expect(items).toHaveLength(1);
  }, 20_000);
});
