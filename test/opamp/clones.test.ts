/**
 * Clones of one VM image (supervisor state and bootstrap files copied, so one
 * instance UID and one token on two live hosts), with real opamp-go clients
 * over WebSocket and over HTTP: the clone boots beside the running original,
 * one of the two is told to take a new instance UID
 * (ServerToAgent.agent_identification), which opamp-go takes by itself, and
 * becomes its own collector with the original's environment and tags and a
 * `cloneOf` note; the other keeps the original. Over WebSocket the session
 * taken over shows it, over HTTP the sequence numbers of the two agents'
 * polls (server/opamp/seq-streams.ts). A restarted agent is not a clone.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Collector } from "../../shared/collectors.ts";
import { INSTANCES } from "../../server/opamp/identity.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { description, RawAgent, until, uuidBytes } from "./helpers.ts";
import { OpampGo, opampUrls, TRANSPORTS, type GoAgent } from "./opamp-go.ts";

let server: TestServer;
let go: OpampGo;
beforeAll(async () => {
  server = await startTestServer({ SVC_EXTERNALURL: "https://svc.example.com" });
  go = new OpampGo();
});
afterAll(async () => {
  await go.close();
  await server.stop();
});

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);
const named = async (prefix: string) => (await call<{ items: Collector[] }>("/collectors?limit=500")).items.filter((c) => c.name.startsWith(prefix));
const collectorOf = async (uid: string) => (await server.app.store.get<{ collectorId: string }>(INSTANCES, uid))?.data.collectorId;
/** Waits for `n` more answers to the agent's messages (opamp-go's OnMessage), counted from `from`. */
const answered = (agent: GoAgent, n: number, what: string, from = agent.mark()) =>
  agent.waitFor(() => agent.count((e) => e.event === "message", from) >= n, `${n} answers ${what}`, 30_000, from);

describe.each(TRANSPORTS)("over %s", (transport) => {
  test("a clone booted beside the original: one of the two is given a new instance UID and becomes its own collector", async () => {
    const url = opampUrls(server.base)[transport];
    const name = `image-host-${transport}`;
    const token = (await call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp" })).token;
    const uid = Buffer.from(uuidBytes()).toString("hex");
    const image = { url, token, uid, description: { identifying: { "service.instance.id": name } }, heartbeatSeconds: 1 };
    const first = await go.agent(image);
    await answered(first, 3, "to the original", 0);
    const [original] = await named(name);
    await call(`/collectors/${original!.id}`, "PATCH", { tags: { team: "edge" }, environment: "prod" });

    // The clone boots with the same state while the original runs on.
    const second = await go.agent(image);
    await until(async () => first.uid !== uid || second.uid !== uid, 30_000, 50, "one of the two agents to be given a new instance UID");
    const [split, kept] = first.uid !== uid ? [first, second] : [second, first];
    expect(split.uid).toMatch(/^[0-9a-f]{32}$/);
    expect(kept.uid).toBe(uid);

    const collectors = await until(
      async () => {
        const found = await named(name);
        return found.length === 2 && found;
      },
      15_000,
      50,
      "a second collector for the clone",
    );
    const clone = collectors.find((c) => c.id !== original!.id)!;
    expect(clone.cloneOf).toMatchObject({ collectorId: original!.id, name, instanceUid: uid });
    expect({ environment: clone.environment, tags: clone.tags }).toEqual({ environment: "prod", tags: { team: "edge" } });
    expect((await call<Collector>(`/collectors/${original!.id}`)).cloneOf).toBeUndefined();
    expect(await collectorOf(split.uid)).toBe(clone.id);
    expect(await collectorOf(uid)).toBe(original!.id);

    // Both go on, each as its own collector: nothing is split again.
    const [fromSplit, fromKept] = [split.mark(), kept.mark()];
    await Promise.all([answered(split, 3, "to the clone after the split", fromSplit), answered(kept, 3, "to the original after the split", fromKept)]);
    expect(split.count((e) => e.newInstanceUid !== undefined, fromSplit) + kept.count((e) => e.newInstanceUid !== undefined, fromKept)).toBe(0);
    expect(split.count((e) => e.event === "error") + kept.count((e) => e.event === "error")).toBe(0);

    // The clone restarts later with its new UID and the token it holds: it is the clone again, nothing new is made.
    await split.restart();
    const restarted = split.mark();
    await answered(split, 3, "to the restarted clone", restarted);
    expect(split.count((e) => e.newInstanceUid !== undefined, restarted)).toBe(0);
    expect(await named(name)).toHaveLength(2);
    const audit = await call<{ items: { resourceId: string; details: { cloneOf?: string } }[] }>("/audit?action=collector.create&limit=200");
    expect(audit.items.find((e) => e.resourceId === clone.id)?.details.cloneOf).toBe(original!.id);
    await Promise.all([split.stop(), kept.stop()]);
  }, 90_000);

  test("an agent restarted with its instance UID (its numbers start again at 0) is the same collector, not a clone", async () => {
    const url = opampUrls(server.base)[transport];
    const name = `restarted-${transport}`;
    const token = (await call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp" })).token;
    const agent = await go.agent({ url, token, description: { identifying: { "service.instance.id": name } }, heartbeatSeconds: 1 });
    const uid = agent.uid;
    await answered(agent, 4, "before the restarts", 0);
    for (let i = 0; i < 2; i++) {
      await agent.restart();
      await answered(agent, 4, `after restart ${i + 1}`);
    }
    expect(agent.uid).toBe(uid);
    expect(agent.count((e) => e.newInstanceUid !== undefined)).toBe(0);
    expect(await named(name)).toHaveLength(1);
    await agent.stop();
  }, 90_000);
});

// A raw agent: an old socket left open and silent (a half-open TCP connection) is not something a real client can be made to leave behind on cue.
test("a reconnect while the old socket is still open (and silent) is the same collector: nothing is split", async () => {
  const wsUrl = opampUrls(server.base).ws;
  const token = (await call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp" })).token;
  const uid = uuidBytes();
  const stale = await RawAgent.connect(wsUrl, token, uid);
  await stale.call({ agentDescription: description({ "service.instance.id": "flaky-net" }) });
  const fresh = await RawAgent.connect(wsUrl, token, uid);
  for (let i = 0; i < 3; i++)
    expect((await fresh.call(i === 0 ? { agentDescription: description({ "service.instance.id": "flaky-net" }) } : {})).agentIdentification).toBeUndefined();
  expect(await named("flaky-net")).toHaveLength(1);
  stale.close();
  fresh.close();
});
