/** Live events over SSE: a collector change reaches a listening client; scopes filter what it sees. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sseBlocks } from "../client.ts";
import { startTestServer, type TestServer } from "../harness.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

/** Reads events until `count` have arrived or the time runs out. */
async function collect(res: Response, count: number, timeoutMs = 3000): Promise<{ event: string; data: Record<string, unknown> }[]> {
  const reader = res.body!.getReader();
  const events: { event: string; data: Record<string, unknown> }[] = [];
  const deadline = setTimeout(() => void reader.cancel(), timeoutMs);
  try {
    for await (const { event, data } of sseBlocks(reader)) {
      if (event && data) events.push({ event, data: JSON.parse(data) });
      if (events.length >= count) break;
    }
  } finally {
    clearTimeout(deadline);
    await reader.cancel().catch(() => {});
  }
  return events;
}

test("a collector created and renamed shows up as collector events carrying the record", async () => {
  const res = await server.api("/events");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toStartWith("text/event-stream");
  const reading = collect(res, 2);
  const created = (await (await server.api("/collectors", { method: "POST", json: { name: "live-1" } })).json()) as { id: string };
  await server.api(`/collectors/${created.id}`, { method: "PATCH", json: { name: "live-2" } });
  const events = await reading;
  expect(events.map((e) => e.event)).toEqual(["collector", "collector"]);
  expect(events.map((e) => (e.data.data as { name: string }).name)).toEqual(["live-1", "live-2"]);
});

test("a caller without config:read sees collector events but no config events", async () => {
  const made = (await (await server.api("/service-accounts", { method: "POST", json: { name: "watcher", scopes: ["collectors:read"] } })).json()) as {
    token: string;
  };
  const res = await server.api("/events", { token: made.token });
  const reading = collect(res, 1);
  await server.api("/sources", { method: "POST", json: { name: "hidden", type: "journald", config: {} } });
  await server.api("/collectors", { method: "POST", json: { name: "seen" } });
  const events = await reading;
  expect(events.map((e) => e.event)).toEqual(["collector"]);
  const noScope = (await (await server.api("/service-accounts", { method: "POST", json: { name: "blind", scopes: ["audit:read"] } })).json()) as {
    token: string;
  };
  expect((await server.api("/events", { token: noScope.token })).status).toBe(403);
});

test("stopping the server ends open event streams instead of waiting on them", async () => {
  const other = await startTestServer();
  const res = await other.api("/events");
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  await reader.read(); // ": connected"
  const stopped = other.stop().then(() => "stopped");
  expect(await Promise.race([stopped, Bun.sleep(3000).then(() => "hung")])).toBe("stopped");
  expect((await reader.read().catch(() => ({ done: true }))).done).toBe(true);
});

test("a quiet stream outlives the server's 10 s idle timeout: keepalives keep it open", async () => {
  const res = await server.api("/events");
  const reading = collect(res, 1, 17_000);
  await Bun.sleep(14_500);
  await server.api("/collectors", { method: "POST", json: { name: "after-quiet" } });
  const events = await reading;
  expect(events.map((e) => (e.data.data as { name: string }).name)).toEqual(["after-quiet"]);
}, 25_000);
