/**
 * An AgentDescription over the OpAMP message limit, from a real opamp-go
 * client over WebSocket and over HTTP: it is answered ServerErrorResponse
 * UNAVAILABLE with a retry-after (the hold time), and the client sends it
 * again once per hold, not in an endless redial. Over WebSocket its session
 * is held, then closed, and opamp-go redials; over HTTP (where opamp-go drops
 * a 413'd report, and retries a 503'd one with the same bytes forever, see
 * server/opamp/channel.ts tooLarge) it polls on, and its full state is asked
 * for again only after the hold. Sent smaller, the description is taken.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { MAX_MESSAGE_BYTES, OpampChannel } from "../../server/opamp/channel.ts";
import { INSTANCES } from "../../server/opamp/identity.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { until } from "../opamp/helpers.ts";
import { OpampGo, opampUrls, TRANSPORTS, type GoEvent } from "../opamp/opamp-go.ts";

const HOLD_SECONDS = 2;
let server: TestServer;
let go: OpampGo;
beforeAll(async () => {
  server = await startTestServer();
  // The served channel, with a hold short enough for a test.
  const index = server.app.channels.findIndex((c) => c.name === "opamp");
  server.app.channels[index]!.stop?.();
  const channel = new OpampChannel(server.app, { refusedHoldSeconds: HOLD_SECONDS });
  channel.start();
  server.app.channels[index] = channel;
  go = new OpampGo();
});
afterAll(async () => {
  await go.close();
  await server.stop();
});

const isError = (e: GoEvent) => e.event === "error";

describe.each(TRANSPORTS)("over %s", (transport) => {
  test("is answered UNAVAILABLE with a retry-after, sent again once per hold, and taken once smaller", async () => {
    const { token } = await server.call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp" });
    const name = `huge-${transport}`;
    const blob = randomBytes(MAX_MESSAGE_BYTES)
      .toString("base64url")
      .slice(0, MAX_MESSAGE_BYTES + 2);
    const started = Date.now();
    const agent = await go.agent({
      url: opampUrls(server.base)[transport],
      token,
      description: { identifying: { "service.name": name }, nonIdentifying: { blob } },
      heartbeatSeconds: 1,
    });

    const first = await agent.waitFor(isError, "the first ServerErrorResponse", 30_000);
    expect(first.errorType).toBe("ServerErrorResponseType_Unavailable");
    expect(first.error).toContain("over this server's limit");
    expect(first.retryAfterNs).toBe(HOLD_SECONDS * 1e9);
    await agent.waitFor(() => agent.count(isError) >= 3, "the third ServerErrorResponse", 60_000);
    // Each is sent a hold after the one before at the earliest: a lower bound the server's timer sets
    // (before the fix, over HTTP: 413, no answer opamp-go reads; over WebSocket: a close, and a redial at once).
    expect(Date.now() - started).toBeGreaterThanOrEqual(2 * HOLD_SECONDS * 1000);
    const [e1, e2] = agent.events.flatMap((e, i) => (isError(e) ? [i] : []));
    const between = agent.count((e) => e.event === "connected", e1) - agent.count((e) => e.event === "connected", e2);
    if (transport === "ws")
      expect(between).toBe(1); // one session per hold: the held one closes, opamp-go redials once
    else expect(between).toBeGreaterThanOrEqual(2); // it polled on while held (each answered 200), then was asked again

    // Smaller, it is taken: the collector gets the description, and no error follows.
    await agent.describe({ identifying: { "service.name": name } });
    const reported = await until(
      async () => {
        const id = (await server.app.store.get<{ collectorId: string }>(INSTANCES, agent.uid))?.data.collectorId;
        if (!id) return null;
        const collector = await server.call<{ reported?: Record<string, string> }>(`/collectors/${id}`);
        return collector.reported?.["service.name"] === name && collector;
      },
      30_000,
      100,
      `the collector's reported service.name ${name}`,
    );
    expect(reported.reported?.blob).toBeUndefined();
    const taken = agent.mark();
    await agent.waitFor(() => agent.count((e) => e.event === "message", taken) >= 3, "3 answers after the description was taken", 30_000, taken);
    expect(agent.count(isError, taken)).toBe(0);
    await agent.stop();
  }, 120_000);
});
