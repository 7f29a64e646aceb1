/**
 * The /v1/agent channel and the /agents API against a scripted agent over a
 * real loopback WebSocket: admission by enrollment token and agent id,
 * reconnects that count no use, hello and discovery stored, browse relayed
 * by request id with errors mapped and every call audited, timeouts, offline.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { AgentMessage, DiscoveryReport, HostFacts, ServerMessage } from "../../agent/types.ts";
import { startTestServer, tokenWithScopes, type TestServer } from "../harness.ts";
import { until } from "../opamp/helpers.ts";

let server: TestServer;
let wsUrl: string;

beforeAll(async () => {
  server = await startTestServer();
  wsUrl = `${server.base.replace(/^http/, "ws")}/v1/agent`;
});
afterAll(() => server.stop());

const HOST: HostFacts = {
  hostname: "web-1",
  os: { platform: "linux", distro: "Debian GNU/Linux", release: "13", kernel: "6.12.0", arch: "x64" },
  cpu: { model: "test cpu", cores: 2 },
  memoryBytes: 2 ** 33,
  ips: ["10.0.0.7"],
  machineId: null,
  container: { inContainer: false, kubernetes: false, podName: null, namespace: null, nodeName: null },
};

const REPORT: DiscoveryReport = {
  services: [
    {
      fingerprint: "nginx",
      title: "NGINX",
      evidence: ["process:nginx", "port:80"],
      pids: [42],
      ports: [80],
      logFiles: ["/var/log/nginx/access.log"],
      pipeline: { source: { type: "filelog", config: { include: ["/var/log/nginx/*.log"] } }, processors: [] },
    },
  ],
  collectors: [],
  logSources: [{ kind: "file", path: "/var/log/nginx/access.log", service: "nginx" }],
};

/** A scripted agent: answers requests with `answer`, records what it got. */
class FakeAgent {
  readonly received: ServerMessage[] = [];
  answer: (m: ServerMessage) => Omit<Extract<AgentMessage, { type: "response" }>, "type" | "id"> | null = () => ({ result: { ok: true } });
  closed: { code: number; reason: string } | null = null;

  private constructor(readonly ws: WebSocket) {
    ws.onmessage = (event) => {
      const message = JSON.parse(String(event.data)) as ServerMessage;
      this.received.push(message);
      if ("id" in message) {
        const reply = this.answer(message);
        if (reply) this.send({ type: "response", id: message.id, ...reply } as AgentMessage);
      }
    };
    ws.onclose = (event) => {
      this.closed = { code: event.code, reason: event.reason };
    };
  }

  static connect(token: string, agentId: string): Promise<FakeAgent> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(wsUrl, { headers: { Authorization: `Bearer ${token}`, "X-Svc-Agent-Id": agentId } } as unknown as string[]);
      const agent = new FakeAgent(ws);
      ws.onopen = () => resolve(agent);
      ws.onerror = () => reject(new Error("refused"));
    });
  }

  send(message: AgentMessage | Record<string, unknown>): void {
    this.ws.send(JSON.stringify(message));
  }

  hello(agentId: string, environment = "production"): void {
    this.send({ type: "hello", agentId, version: "0.1.0", environment, host: HOST, browse: { enabled: true, allowedRoots: ["/var/log"] } });
  }
}

async function agentToken(extra: Record<string, unknown> = {}): Promise<{ token: string; id: string }> {
  return server.call<{ token: string; id: string }>("/enrollment-tokens", "POST", { kind: "agent", ...extra });
}

function upgrade(headers: Record<string, string>): Promise<Response> {
  return fetch(`${server.base}/v1/agent`, {
    headers: { Upgrade: "websocket", Connection: "Upgrade", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "13", ...headers },
  });
}

describe("admission", () => {
  test("401 without a token, with a service-account or unknown token, and a revoked one; 400 without an agent id; 426 without an upgrade", async () => {
    const { token, id } = await agentToken();
    for (const auth of [undefined, `Bearer ${server.adminToken}`, "Bearer svcen_nope", "Basic YTpi"]) {
      const res = await upgrade({ ...(auth ? { Authorization: auth } : {}), "X-Svc-Agent-Id": "host-a" });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unauthenticated");
    }
    expect((await upgrade({ Authorization: `Bearer ${token}` })).status).toBe(400);
    expect((await upgrade({ Authorization: `Bearer ${token}`, "X-Svc-Agent-Id": "../etc" })).status).toBe(400);
    expect((await fetch(`${server.base}/v1/agent`, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(426);
    await server.call(`/enrollment-tokens/${id}`, "DELETE");
    expect((await upgrade({ Authorization: `Bearer ${token}`, "X-Svc-Agent-Id": "host-a" })).status).toBe(401);
  });

  test("an OpAMP enrollment token does not admit an agent", async () => {
    const { token } = await server.call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp" });
    expect((await upgrade({ Authorization: `Bearer ${token}`, "X-Svc-Agent-Id": "host-b" })).status).toBe(401);
  });

  test("a single-use token enrolls one host; that host reconnects without using it again; another host is refused", async () => {
    const { token, id } = await agentToken({ maxUses: 1 });
    const first = await FakeAgent.connect(token, "host-single");
    first.ws.close();
    await until(async () => first.closed !== null, 2000);
    const again = await FakeAgent.connect(token, "host-single");
    const tokens = await server.call<{ items: { id: string; uses: number }[] }>("/enrollment-tokens?limit=1000");
    expect(tokens.items.find((t) => t.id === id)!.uses).toBe(1);
    expect((await upgrade({ Authorization: `Bearer ${token}`, "X-Svc-Agent-Id": "host-other" })).status).toBe(401);
    again.ws.close();
  });

  test("a newer session of the same agent replaces the older one", async () => {
    const { token } = await agentToken({ maxUses: null });
    const older = await FakeAgent.connect(token, "host-twice");
    const newer = await FakeAgent.connect(token, "host-twice");
    await until(async () => older.closed !== null, 2000);
    expect(older.closed!.code).toBe(4001);
    expect(newer.closed).toBeNull();
    newer.ws.close();
  });
});

describe("registry and relay", () => {
  test("hello and discovery are stored and listed; the token's environment wins; close marks offline", async () => {
    const { token } = await agentToken({ environment: "staging" });
    const agent = await FakeAgent.connect(token, "web-1-id");
    await until(async () => agent.received.some((m) => m.type === "welcome"), 2000);
    agent.hello("web-1-id", "production");
    agent.send({ type: "discovery", report: REPORT });
    await until(async () => (await server.app.agents.flush(), (await server.app.agents.get("web-1-id")).discovery !== null), 2000);
    const one = await server.call<Record<string, unknown>>("/agents/web-1-id");
    expect(one).toMatchObject({ id: "web-1-id", name: "web-1", environment: "staging", status: "online", connected: true, host: HOST, discovery: REPORT });
    const listed = await server.call<{ items: { id: string }[] }>("/agents?status=online&q=web-1");
    expect(listed.items.map((a) => a.id)).toEqual(["web-1-id"]);
    agent.ws.close();
    await until(async () => (await server.app.agents.flush(), (await server.app.agents.get("web-1-id")).status === "offline"), 2000);
    expect((await server.call<{ connected: boolean }>("/agents/web-1-id")).connected).toBe(false);
  });

  test("a malformed hello closes the session; unknown message types too; a message over 4 MiB of UTF-8 too", async () => {
    const { token } = await agentToken({ maxUses: 3 });
    const agent = await FakeAgent.connect(token, "bad-hello");
    agent.send({ type: "hello", agentId: "bad-hello", host: { hostname: 7 } });
    await until(async () => agent.closed !== null, 2000);
    expect(agent.closed!.code).toBe(1008);
    const other = await FakeAgent.connect(token, "bad-type");
    other.send({ type: "exfiltrate" });
    await until(async () => other.closed !== null, 2000);
    expect(other.closed!.code).toBe(1008);
    // 1.5 M characters, 4.5 MB once encoded: the cap is on bytes.
    const big = await FakeAgent.connect(token, "big-hello");
    big.send({ type: "hello", agentId: "big-hello", pad: "€".repeat(1_500_000) });
    await until(async () => big.closed !== null, 5000);
    expect(big.closed!.code).toBe(1009);
  });

  test("a discovery nested 50,000 deep closes that session (1008) and costs no other agent its state", async () => {
    const { token } = await agentToken({ maxUses: null });
    const [honest, poison] = await Promise.all([FakeAgent.connect(token, "honest-host"), FakeAgent.connect(token, "poison-host")]);
    honest.hello("honest-host");
    poison.hello("poison-host");
    await until(async () => (await server.app.agents.flush(), (await server.app.agents.get("poison-host")).host !== null), 2000);
    const deep = "[".repeat(50_000) + "]".repeat(50_000);
    const service = REPORT.services[0]!;
    const poisoned = `{"type":"discovery","report":{"services":[{"fingerprint":"x","title":"X","evidence":[],"pids":[],"ports":[],"logFiles":[],"pipeline":{"source":{"type":"filelog","config":{"deep":${deep}}},"processors":[]}}],"collectors":[],"logSources":[]}}`;
    // Both in one coalesced batch: the poisoned one first.
    poison.ws.send(poisoned);
    honest.send({ type: "discovery", report: { ...REPORT, services: [{ ...service, title: "honest" }] } });
    await until(async () => poison.closed !== null, 5000);
    expect(poison.closed!.code).toBe(1008);
    expect(poison.closed!.reason).toContain("nests objects and arrays more than 1000 levels");
    await until(async () => (await server.app.agents.flush(), (await server.app.agents.get("honest-host")).discovery !== null), 2000);
    expect((await server.app.agents.get("honest-host")).discovery!.services[0]!.title).toBe("honest");
    expect((await server.app.agents.get("poison-host")).discovery).toBeNull();
    honest.ws.close();
  });

  test("browse and sample are relayed by id, agent errors keep their code, every call is audited; scope agents:browse", async () => {
    const { token } = await agentToken();
    const agent = await FakeAgent.connect(token, "browse-host");
    agent.hello("browse-host");
    agent.answer = (m) => {
      if (m.type === "browse.list" && m.path === "/bad") return { result: { path: m.path, entries: "all of them" } };
      if (m.type === "browse.list") return { result: { path: m.path, entries: [], truncated: false } };
      if (m.type === "browse.sample" && m.path === "/etc/shadow") return { error: { code: "denied_by_pattern", message: "denied by *shadow*" } };
      if (m.type === "browse.sample") return { result: { path: m.path, mode: m.mode, from: m.from, size: 3, binary: false, content: "hi\n", lines: 1, truncated: false } };
      return null;
    };
    const list = await server.api("/agents/browse-host/browse?path=/var/log");
    expect(list.status).toBe(200);
    expect(await list.json()).toEqual({ path: "/var/log", entries: [], truncated: false });
    const sample = await server.api("/agents/browse-host/sample?path=/var/log/app.log&mode=bytes&from=head");
    expect(await sample.json()).toMatchObject({ mode: "bytes", from: "head", content: "hi\n" });
    const denied = await server.api("/agents/browse-host/sample?path=/etc/shadow");
    expect(denied.status).toBe(403);
    expect(((await denied.json()) as { error: { code: string } }).error.code).toBe("denied_by_pattern");
    expect(agent.received.find((m) => m.type === "browse.sample" && m.path === "/etc/shadow")).toMatchObject({ mode: "lines", from: "tail" });
    const malformed = await server.api("/agents/browse-host/browse?path=/bad");
    expect(malformed.status).toBe(502);
    expect(((await malformed.json()) as { error: unknown }).error).toMatchObject({
      code: "agent_bad_answer",
      details: [
        { path: "truncated", message: "expected required property" },
        { path: "entries", message: "expected array" },
      ],
    });

    const audit = await server.call<{ items: { action: string; outcome: string; details: Record<string, unknown> }[] }>("/audit?limit=20");
    const browse = audit.items.filter((e) => e.action.startsWith("agent.browse"));
    expect(browse.map((e) => [e.action, e.outcome, e.details.path])).toEqual([
      ["agent.browse.list", "failure", "/bad"],
      ["agent.browse.sample", "failure", "/etc/shadow"],
      ["agent.browse.sample", "success", "/var/log/app.log"],
      ["agent.browse.list", "success", "/var/log"],
    ]);

    const reader = await tokenWithScopes(server, ["agents:read"]);
    expect((await server.api("/agents/browse-host/browse?path=/var/log", { token: reader })).status).toBe(403);
    expect((await server.api("/agents/browse-host", { token: reader })).status).toBe(200);
    expect((await server.api("/agents/browse-host/sample?path=/x&mode=words")).status).toBe(400);
    agent.ws.close();
  });

  test("409 agent_offline for a known agent without a session, 404 for an unknown one, 504 when the agent does not answer", async () => {
    const { token } = await agentToken();
    const agent = await FakeAgent.connect(token, "slow-host");
    agent.hello("slow-host");
    agent.answer = () => null;
    const pending = server.app.agentChannel.request("slow-host", { type: "browse.list", path: "/var/log" }, 100);
    await expect(pending).rejects.toMatchObject({ status: 504, code: "agent_timeout" });
    agent.ws.close();
    await until(async () => !server.app.agentChannel.isConnected("slow-host"), 2000);
    const offline = await server.api("/agents/slow-host/browse?path=/var/log");
    expect(offline.status).toBe(409);
    expect(((await offline.json()) as { error: { code: string } }).error.code).toBe("agent_offline");
    expect((await server.api("/agents/nobody/browse?path=/var/log")).status).toBe(404);
  });

  test("rescan is sent to the agent; DELETE forgets the host and ends its session", async () => {
    const { token } = await agentToken();
    const agent = await FakeAgent.connect(token, "gone-host");
    agent.hello("gone-host");
    agent.answer = (m) => (m.type === "discovery.rescan" ? { result: { changed: true } } : null);
    expect((await server.api("/agents/gone-host/rescan", { method: "POST" })).status).toBe(202);
    expect(agent.received.some((m) => m.type === "discovery.rescan")).toBe(true);
    expect((await server.api("/agents/gone-host", { method: "DELETE" })).status).toBe(204);
    await until(async () => agent.closed !== null, 2000);
    expect((await server.api("/agents/gone-host")).status).toBe(404);
  });
});
