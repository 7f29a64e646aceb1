/**
 * `POST /collectors/{id}/restart` over a real server and real OpAMP agents:
 * a connected WebSocket agent that takes the command is sent
 * ServerToAgentCommand RESTART at once and alone (opamp-go acts on a command
 * and ignores the rest of its message), once; an HTTP poller gets it in the
 * reply to its next poll, then its config in the one after; an agent without
 * AcceptsRestartCommand is not sent it; a remote-config collector is refused
 * (409); the request needs config:publish and is audited.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { AgentCapabilities, AgentToServerSchema, CommandType, ServerToAgentSchema, type ServerToAgent } from "../../server/gen/opamp/v1/opamp_pb.ts";
import { deploymentKit } from "../deployment.ts";
import { startTestServer, tokenWithScopes, type TestServer } from "../harness.ts";
import { CAPS, description, RawAgent, uuidBytes } from "./helpers.ts";

const RESTARTABLE = CAPS | BigInt(AgentCapabilities.AgentCapabilities_AcceptsRestartCommand);
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ SVC_EXTERNALURL: "https://svc.example.com" });
});
afterAll(() => server.stop());

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);
const restart = (id: string) => call<{ requestId: string; requestedAt: string }>(`/collectors/${id}/restart`, "POST");
const isRestart = (m: ServerToAgent) => m.command?.type === CommandType.CommandType_Restart;

test("a connected agent that takes the command is sent it alone, once; one that does not take it is not", async () => {
  const route = await deploymentKit(call);
  const collector = await call<{ id: string }>("/collectors", "POST", { name: "restartable" });
  await route(collector.id);
  await call("/commit", "POST", { message: "restartable" });
  await call("/publish", "POST");
  const { token } = await server.app.collectorTokens.mint({ actor: "test", remoteAddr: null }, collector.id);
  const agent = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, token);
  const other = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, token);
  await agent.call({ agentDescription: description({ "service.name": "restartable" }), capabilities: RESTARTABLE });
  await other.call({ agentDescription: description({ "service.name": "restartable-2" }) });

  const commanded = agent.next(isRestart);
  const request = await restart(collector.id);
  const message = await commanded;
  expect(message.remoteConfig).toBeUndefined();
  expect(message.connectionSettings).toBeUndefined();
  // Later exchanges carry no second command, and the agent without the capability never got one.
  await agent.call({ capabilities: RESTARTABLE });
  await other.call({});
  expect(agent.received.filter(isRestart)).toHaveLength(1);
  expect(other.received.filter(isRestart)).toHaveLength(0);
  agent.close();
  other.close();

  const audit = await call<{ items: { resourceId: string; details: { requestId: string } }[] }>("/audit?action=collector.restart");
  expect(audit.items.filter((e) => e.resourceId === collector.id).map((e) => e.details.requestId)).toEqual([request.requestId]);
});

test("an HTTP poller gets the command in the reply to its next poll, alone, and its config in the one after", async () => {
  const route = await deploymentKit(call);
  const collector = await call<{ id: string }>("/collectors", "POST", { name: "poller" });
  await route(collector.id, "/var/log/poller/*.log");
  await call("/commit", "POST", { message: "poller" });
  await call("/publish", "POST");
  const { token } = await server.app.collectorTokens.mint({ actor: "test", remoteAddr: null }, collector.id);
  const uid = uuidBytes();
  let seq = 0n;
  const poll = async (fields: Record<string, unknown> = {}) => {
    const body = toBinary(AgentToServerSchema, create(AgentToServerSchema, { instanceUid: uid, sequenceNum: ++seq, capabilities: RESTARTABLE, ...fields }));
    const res = await fetch(`${server.base}/v1/opamp`, {
      method: "POST",
      body,
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/x-protobuf" },
    });
    expect(res.status).toBe(200);
    return fromBinary(ServerToAgentSchema, new Uint8Array(await res.arrayBuffer()));
  };
  // Asked for before its first poll: that poll is answered with the command alone, the config follows in the next.
  await restart(collector.id);
  const commanded = await poll({ agentDescription: description({ "service.name": "poller" }) });
  expect(isRestart(commanded)).toBe(true);
  expect(commanded.remoteConfig).toBeUndefined();
  const next = await poll();
  expect(isRestart(next)).toBe(false);
  expect(new TextDecoder().decode(next.remoteConfig!.config!.configMap[""]!.body)).toContain("/var/log/poller/*.log");
});

test("refused for a remote-config collector (409), and without config:publish (403)", async () => {
  const alloy = await call<{ id: string }>("/collectors", "POST", { name: "alloy-restart", managementMode: "rcfg-remotecfg" });
  const refused = await server.api(`/collectors/${alloy.id}/restart`, { method: "POST" });
  expect(refused.status).toBe(409);
  expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("restart_unsupported");
  const otel = await call<{ id: string }>("/collectors", "POST", { name: "otel-restart" });
  const reader = await tokenWithScopes(server, ["collectors:read", "collectors:write"]);
  const denied = await server.api(`/collectors/${otel.id}/restart`, { method: "POST", token: reader });
  expect(denied.status).toBe(403);
  expect((await server.api(`/collectors/nope/restart`, { method: "POST" })).status).toBe(404);
});
