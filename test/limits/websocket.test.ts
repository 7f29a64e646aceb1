/**
 * WebSocket limits per channel: an agent message over the channel's cap
 * closes the session with 1009 (an OpAMP one is answered with a retry-after
 * instead: test/limits/opamp-oversized.test.ts, with opamp-go); a peer that stops reading is not buffered
 * for without bound — past MAX_BUFFERED_BYTES waiting the session is closed
 * with 1013, its pending requests fail at once, and it is admitted again;
 * a stalled OpAMP collector gets the latest config when it reconnects.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { MAX_BUFFERED_BYTES } from "../../server/channel/channel.ts";
import { deploymentKit } from "../deployment.ts";
import { description, RawAgent, until } from "../opamp/helpers.ts";
import { startTestServer, type TestServer } from "../harness.ts";

let server: TestServer;
let wsBase: string;
beforeAll(async () => {
  server = await startTestServer();
  wsBase = server.base.replace(/^http/, "ws");
});
afterAll(() => server.stop());

/** Text that permessage-deflate cannot shrink much, so unread frames fill buffers as their length says. */
const incompressible = (length: number) => randomBytes(length).toString("base64url").slice(0, length);

/** An agent-channel client that records its close and the credential its welcome carries (a reconnect of the same id needs it). */
function agentSocket(
  token: string,
  agentId: string,
  credential?: string,
): Promise<{ ws: WebSocket; closed: () => { code: number } | null; credential: () => string | undefined }> {
  return new Promise((resolve, reject) => {
    let closed: { code: number } | null = null;
    let welcomed: string | undefined;
    const headers: Record<string, string> = {
      Authorization: `Bearer ${token}`,
      "X-Svc-Agent-Id": agentId,
      ...(credential ? { "X-Svc-Agent-Credential": credential } : {}),
    };
    const ws = new WebSocket(`${wsBase}/v1/agent`, { headers } as unknown as string[]);
    ws.onmessage = (event) => {
      const message = JSON.parse(String(event.data)) as { type?: string; credential?: string };
      if (message.type === "welcome" && message.credential) welcomed = message.credential;
    };
    ws.onclose = (event) => (closed = { code: event.code });
    const timer = setTimeout(() => (ws.close(), reject(new Error(`agent ${agentId}'s session did not open within 10 s`))), 10_000);
    ws.onopen = () => (clearTimeout(timer), resolve({ ws, closed: () => closed, credential: () => welcomed }));
    ws.onerror = () => (clearTimeout(timer), reject(new Error(`agent ${agentId}'s session was refused`)));
  });
}

describe("message size caps", () => {
  test("an agent message over the channel's cap is closed with 1009", async () => {
    const { token } = await server.call<{ token: string }>("/enrollment-tokens", "POST", { kind: "agent" });
    const agent = await agentSocket(token, "big-talker");
    agent.ws.send(JSON.stringify({ type: "hello", pad: "x".repeat(5 * 1024 * 1024) }));
    await until(async () => agent.closed() !== null, 5000);
    expect(agent.closed()!.code).toBe(1009);
  });
});

describe("a peer that does not read", () => {
  test("is closed with 1013 once its unsent bytes pass the bound; its requests fail at once; it reconnects", async () => {
    const { token } = await server.call<{ token: string }>("/enrollment-tokens", "POST", { kind: "agent" });
    const agent = await agentSocket(token, "stalled");
    await until(async () => agent.credential() !== undefined, 5000);
    // Bun's client can stop reading its socket, so the server sees TCP backpressure.
    const flow = agent.ws as unknown as { pause(): boolean; resume(): boolean };
    expect(flow.pause()).toBe(true);
    // Each request is ~1 MiB; 32 of them are more than the kernel's socket buffers and our bound together.
    expect(MAX_BUFFERED_BYTES).toBeLessThan(16 * 1024 * 1024);
    const path = "/var/log/" + incompressible(1024 * 1024);
    const outcomes = await Promise.all(
      Array.from({ length: 32 }, () =>
        server.app.agentChannel.request("stalled", { type: "browse.list", path }, 15_000).then(
          () => "answered",
          (error: { code?: string }) => error.code ?? "error",
        ),
      ),
    );
    expect(new Set(outcomes)).toEqual(new Set(["agent_offline"]));
    flow.resume();
    await until(async () => agent.closed() !== null, 20_000, 20, "the stalled agent's socket to close");
    // 1013 when the close frame gets through; 1006 when it too is stuck behind the unread bytes (a busy machine).
    expect([1013, 1006]).toContain(agent.closed()!.code);
    const again = await agentSocket(token, "stalled", agent.credential());
    again.ws.close();
  }, 60_000);
});

describe("an OpAMP collector that does not read its socket", () => {
  let big: TestServer;
  beforeAll(async () => {
    big = await startTestServer({ SVC_HTTP_MAXBODYBYTES: String(8 * 1024 * 1024) });
  });
  afterAll(() => big.stop());

  test("is dropped while publishes pile up, and gets the latest config on reconnect", async () => {
    const collector = await big.call<{ id: string }>("/collectors", "POST", { name: "stalled-otelcol" });
    const { token } = await big.call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp", collectorId: collector.id });
    const url = `${big.base.replace(/^http/, "ws")}/v1/opamp`;
    const agent = await RawAgent.connect(url, token);
    await agent.call({ agentDescription: description({ "service.name": "stalled" }) });
    await (await deploymentKit(big.call))(collector.id);
    const [{ sourceId }] = (await big.call<{ items: { sourceId: string }[] }>(`/collectors/${collector.id}/sources`)).items as [{ sourceId: string }];
    const [{ destinationId }] = (await big.call<{ items: { destinationId: string }[] }>(`/collectors/${collector.id}/destinations`)).items as [
      { destinationId: string },
    ];
    const flow = agent.ws as unknown as { pause(): boolean; resume(): boolean };
    expect(flow.pause()).toBe(true);
    const opamp = big.app.channels.find((c) => c.name === "opamp")!;
    // One ~3 MiB source (random names: frames are deflated), then a small change per round: each publish pushes the whole config again.
    const include = Array.from({ length: 3000 }, () => `/var/log/stalled/${incompressible(1000)}.log`);
    await big.call(`/collectors/${collector.id}/sources`, "POST", { sourceId, configOverrides: { include } });
    let round = 0;
    for (; round < 12 && opamp.health().connections !== 0; round++) {
      await big.call(`/collectors/${collector.id}/destinations`, "POST", {
        destinationId,
        configOverrides: { endpoint: `https://round-${round}.example.com` },
      });
      await big.call("/commit", "POST", { message: `round ${round}` });
      await big.call(`/publish/${collector.id}`, "POST");
    }
    await until(async () => opamp.health().connections === 0, 20_000, 100, "the stalled collector's session to be dropped");
    flow.resume();
    // 1013 when the close frame gets through; 1006 when it too is stuck behind the unread bytes.
    expect([1013, 1006]).toContain((await agent.waitClosed()).code);
    // The same instance comes back and is sent the last published config.
    const again = await RawAgent.connect(url, token);
    try {
      const reply = await again.call({ instanceUid: agent.uid, agentDescription: description({ "service.name": "stalled" }) });
      const body = new TextDecoder().decode(reply.remoteConfig!.config!.configMap[""]!.body);
      expect(body).toContain(`https://round-${round - 1}.example.com`);
    } finally {
      again.ws.close();
    }
  }, 120_000); // up to 12 publishes of a 3 MiB config: seconds each on a busy machine
});
