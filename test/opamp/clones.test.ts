/**
 * Clones of one VM image (supervisor state and bootstrap files copied, so one
 * instance UID and one token on two live hosts), over a real server and raw
 * WebSocket agents: when the session that was taken over speaks again, it is
 * told to take a new instance UID (ServerToAgent.agent_identification, 16
 * bytes as opamp-go requires) and becomes its own collector, with the
 * original's environment and tags and a `cloneOf` note; the other keeps the
 * original. A reconnect, whose old socket falls silent, splits nothing.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Collector } from "../../shared/collectors.ts";
import { ServerToAgentFlags } from "../../server/gen/opamp/v1/opamp_pb.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { description, RawAgent, uuidBytes } from "./helpers.ts";

let server: TestServer;
let wsUrl: string;
beforeAll(async () => {
  server = await startTestServer({ SVC_EXTERNALURL: "https://svc.example.com" });
  wsUrl = `${server.base.replace(/^http/, "ws")}/v1/opamp`;
});
afterAll(() => server.stop());

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);
const named = async (prefix: string) => (await call<{ items: Collector[] }>("/collectors?limit=500")).items.filter((c) => c.name.startsWith(prefix));

test("a second live agent with one instance UID splits off as its own collector under a new UID; the first keeps the original", async () => {
  const token = (await call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp" })).token;
  const uid = uuidBytes();
  const first = await RawAgent.connect(wsUrl, token, uid);
  await first.call({ agentDescription: description({ "service.instance.id": "image-host" }) });
  const [original] = await named("image-host");
  await call(`/collectors/${original!.id}`, "PATCH", { tags: { team: "edge" }, environment: "prod" });

  // The clone boots with the same state: it takes the instance over.
  const second = await RawAgent.connect(wsUrl, token, uid);
  const welcomed = await second.call({ agentDescription: description({ "service.instance.id": "image-host" }) });
  expect(welcomed.agentIdentification).toBeUndefined();

  // The first speaks again: both are live, so one of them is a clone.
  const told = await first.call({});
  const newUid = told.agentIdentification?.newInstanceUid;
  expect(newUid).toHaveLength(16);
  expect(Buffer.from(newUid!).equals(Buffer.from(uid))).toBe(false);
  expect(told.flags & BigInt(ServerToAgentFlags.ServerToAgentFlags_ReportFullState)).toBeTruthy();
  // Told again, not split again, while it still speaks with the old UID.
  expect(Buffer.from((await first.call({})).agentIdentification!.newInstanceUid).equals(Buffer.from(newUid!))).toBe(true);

  // It takes the new UID (opamp-go sets it; the supervisor sends its description again) on the same session.
  first.uid = newUid!;
  const answered = await first.call({ agentDescription: description({ "service.instance.id": "image-host" }) });
  expect(answered.errorResponse).toBeUndefined();
  expect(answered.agentIdentification).toBeUndefined();
  expect(first.closed).toBeNull();

  const collectors = await named("image-host");
  expect(collectors).toHaveLength(2);
  const clone = collectors.find((c) => c.id !== original!.id)!;
  expect(clone.cloneOf).toMatchObject({ collectorId: original!.id, name: "image-host", instanceUid: Buffer.from(uid).toString("hex") });
  expect({ environment: clone.environment, tags: clone.tags }).toEqual({ environment: "prod", tags: { team: "edge" } });
  expect((await call<Collector>(`/collectors/${original!.id}`)).cloneOf).toBeUndefined();

  // The original's session goes on as before.
  expect((await second.call({})).agentIdentification).toBeUndefined();
  // The clone reconnects later with its new UID and the token it holds: it is the clone again, nothing new is made.
  first.close();
  await first.waitClosed();
  const again = await RawAgent.connect(wsUrl, token, newUid!);
  const back = await again.call({ agentDescription: description({ "service.instance.id": "image-host" }) });
  expect(back.errorResponse).toBeUndefined();
  expect(back.agentIdentification).toBeUndefined();
  expect(await named("image-host")).toHaveLength(2);
  const audit = await call<{ items: { resourceId: string; details: { cloneOf?: string } }[] }>("/audit?action=collector.create");
  expect(audit.items.find((e) => e.resourceId === clone.id)?.details.cloneOf).toBe(original!.id);
  again.close();
  second.close();
});

test("a reconnect while the old socket is still open (and silent) is the same collector: nothing is split", async () => {
  const token = (await call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp" })).token;
  const uid = uuidBytes();
  const stale = await RawAgent.connect(wsUrl, token, uid);
  await stale.call({ agentDescription: description({ "service.instance.id": "flaky-net" }) });
  const fresh = await RawAgent.connect(wsUrl, token, uid);
  for (let i = 0; i < 3; i++) expect((await fresh.call(i === 0 ? { agentDescription: description({ "service.instance.id": "flaky-net" }) } : {})).agentIdentification).toBeUndefined();
  expect(await named("flaky-net")).toHaveLength(1);
  stale.close();
  fresh.close();
});
