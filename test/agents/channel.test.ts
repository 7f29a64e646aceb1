/**
 * The /v1/agent channel and the /agents API against a scripted agent over a
 * real loopback WebSocket: admission by enrollment token, agent id and the
 * agent's own credential (a known id is never taken over by a token alone),
 * reconnects that count no use, hello and discovery stored, browse relayed
 * by request id with errors mapped and every call audited, timeouts, offline.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { AgentChannel as RealAgentChannel } from "../../agent/channel.ts";
import { CredentialFile } from "../../agent/credential.ts";
import type { Logger } from "../../agent/log.ts";
import type { AgentMessage, DiscoveryReport, HostFacts, ServerMessage } from "../../shared/agent-protocol.ts";
import { AGENTS } from "../../server/agents/registry.ts";
import { hashToken } from "../../server/auth/tokens.ts";
import type { ChannelRequest } from "../../server/channel/channel.ts";
import { startTestServer, tokenWithScopes, type TestServer } from "../harness.ts";
import { until } from "../opamp/helpers.ts";

let server: TestServer;
let wsUrl: string;
/** Longest a session waits for its welcome, or a refused upgrade for its answer. */
const WAIT_MS = 10_000;

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

/** The credential each agent id was issued, kept and presented as svc-agent does (agent/credential.ts). */
const credentials = new Map<string, string>();

/** A scripted agent: answers requests with `answer`, records what it got, keeps an issued credential. */
class FakeAgent {
  readonly received: ServerMessage[] = [];
  answer: (m: ServerMessage) => Omit<Extract<AgentMessage, { type: "response" }>, "type" | "id"> | null = () => ({ result: { ok: true } });
  closed: { code: number; reason: string } | null = null;

  private constructor(
    readonly ws: WebSocket,
    agentId: string,
    welcomed: (agent: FakeAgent) => void,
  ) {
    ws.onmessage = (event) => {
      const message = JSON.parse(String(event.data)) as ServerMessage;
      this.received.push(message);
      if (message.type === "welcome") {
        if (message.credential !== undefined) credentials.set(agentId, message.credential);
        welcomed(this);
      }
      if ("id" in message) {
        const reply = this.answer(message);
        if (reply) this.send({ type: "response", id: message.id, ...reply } as AgentMessage);
      }
    };
    ws.onclose = (event) => {
      this.closed = { code: event.code, reason: event.reason };
    };
  }

  /**
   * Resolves on the welcome; fails naming the agent when the session is refused, closed
   * before a welcome, or not welcomed within WAIT_MS. `credential` undefined: the one this
   * id was issued, if any; null: none.
   */
  static connect(token: string, agentId: string, credential: string | null = credentials.get(agentId) ?? null): Promise<FakeAgent> {
    return new Promise((resolve, reject) => {
      const headers = { Authorization: `Bearer ${token}`, "X-Svc-Agent-Id": agentId, ...(credential !== null ? { "X-Svc-Agent-Credential": credential } : {}) };
      const ws = new WebSocket(wsUrl, { headers } as unknown as string[]);
      const fail = (why: string) => (clearTimeout(timer), ws.close(), reject(new Error(`agent ${agentId}: ${why}`)));
      const timer = setTimeout(() => fail(`no welcome within ${WAIT_MS} ms`), WAIT_MS);
      const agent = new FakeAgent(ws, agentId, (welcomed) => (clearTimeout(timer), resolve(welcomed)));
      ws.onerror = () => fail("the session was refused");
      ws.addEventListener("close", () => agent.received.some((m) => m.type === "welcome") || fail(`closed ${agent.closed?.code} before a welcome`));
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

/**
 * An upgrade request the server should refuse. One it accepts never answers a plain
 * fetch (the socket becomes a WebSocket), so past WAIT_MS this fails saying so.
 */
async function upgrade(headers: Record<string, string>): Promise<Response> {
  try {
    return await fetch(`${server.base}/v1/agent`, {
      headers: { Upgrade: "websocket", Connection: "Upgrade", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "13", ...headers },
      signal: AbortSignal.timeout(WAIT_MS),
    });
  } catch (error) {
    throw new Error(
      `the upgrade as agent ${headers["X-Svc-Agent-Id"] ?? "(no id)"} was not refused within ${WAIT_MS} ms (accepted?): ${(error as Error).message}`,
    );
  }
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

  test("plaintext from a non-loopback peer is refused (403 tls_required) before the token is looked at; TLS or loopback is allowed", async () => {
    const { token } = await agentToken();
    const ctx = (authorization: string | null, remoteAddr: string, secure: boolean): ChannelRequest => {
      const headers: Record<string, string> = { Upgrade: "websocket", ...(authorization ? { Authorization: authorization } : {}) };
      const req = new Request(`${server.base}/v1/agent`, { headers });
      return { req, url: new URL(req.url), remoteAddr, requestId: "t", log: pino({ level: "silent" }), server: server.http.server, secure };
    };
    const channel = server.app.agentChannel;
    for (const authorization of [`Bearer ${token}`, null]) {
      await expect(channel.handle(ctx(authorization, "10.1.2.3", false))).rejects.toMatchObject({ status: 403, code: "tls_required" });
    }
    // Past the transport check, the next refusal is the missing token, then the missing agent id.
    await expect(channel.handle(ctx(null, "10.1.2.3", true))).rejects.toMatchObject({ status: 401 });
    await expect(channel.handle(ctx(null, "127.0.0.1", false))).rejects.toMatchObject({ status: 401 });
    await expect(channel.handle(ctx(`Bearer ${token}`, "10.1.2.3", true))).rejects.toMatchObject({ status: 400 });
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

/** What an attacker's connection changed, if anything: the stored record, the token's uses, the agents' audit entries. */
async function snapshot(agentId: string, tokenId: string) {
  await server.app.agents.flush();
  const record = await server.app.store.get(AGENTS, agentId);
  const tokens = await server.call<{ items: { id: string; uses: number }[] }>("/enrollment-tokens?limit=1000");
  const audit = await server.call<{ items: { action: string; target: { id: string } | string }[] }>("/audit?limit=200");
  return { record, uses: tokens.items.find((t) => t.id === tokenId)!.uses, enrolls: audit.items.filter((e) => e.action.startsWith("agent.enroll")).length };
}

async function refusedUpgrade(token: string, agentId: string, credential?: string): Promise<{ status: number; code: string }> {
  const res = await upgrade({ Authorization: `Bearer ${token}`, "X-Svc-Agent-Id": agentId, ...(credential ? { "X-Svc-Agent-Credential": credential } : {}) });
  return { status: res.status, code: ((await res.json()) as { error: { code: string } }).error.code };
}

describe("identity", () => {
  test("the first session gets the agent's credential once; the record keeps only its digest and the API shows neither", async () => {
    const { token } = await agentToken();
    const agent = await FakeAgent.connect(token, "cred-host");
    const welcome = agent.received.find((m) => m.type === "welcome") as Extract<ServerMessage, { type: "welcome" }>;
    expect(welcome.credential).toMatch(/^svcag_[A-Za-z0-9]{43}$/);
    const stored = (await server.app.store.get<{ credentialHash: string }>(AGENTS, "cred-host"))!.data;
    expect(stored.credentialHash).toBe(hashToken(welcome.credential!));
    agent.ws.close();
    await until(async () => agent.closed !== null, 2000);
    const again = await FakeAgent.connect(token, "cred-host");
    expect((again.received[0] as { credential?: string }).credential).toBeUndefined();
    const shown = JSON.stringify(await server.call("/agents/cred-host")) + JSON.stringify(await server.call("/agents?q=cred-host"));
    expect(shown).not.toContain(welcome.credential!);
    expect(shown).not.toContain(stored.credentialHash);
    expect(shown).not.toContain("credentialHash");
    again.ws.close();
  });

  test("hijack: another agent token, or the victim's own shared token, with the victim's id is refused; the victim keeps its session and nothing stored changes", async () => {
    const shared = await agentToken({ maxUses: null });
    const victim = await FakeAgent.connect(shared.token, "victim-host");
    victim.hello("victim-host");
    victim.answer = (m) => (m.type === "browse.list" ? { result: { path: m.path, entries: [], truncated: false } } : null);
    const second = await agentToken({ maxUses: 5 });
    const other = await FakeAgent.connect(second.token, "attacker-own-host");
    const before = await snapshot("victim-host", second.id);
    const sharedUses = (await snapshot("victim-host", shared.id)).uses;

    const attempts = [
      await refusedUpgrade(second.token, "victim-host"),
      await refusedUpgrade(shared.token, "victim-host"),
      // The attacker's own, valid credential belongs to another id.
      await refusedUpgrade(second.token, "victim-host", credentials.get("attacker-own-host")),
      await refusedUpgrade(shared.token, "victim-host", `svcag_${"A".repeat(43)}`),
    ];
    for (const attempt of attempts) expect(attempt).toEqual({ status: 401, code: "agent_credential_required" });

    await Bun.sleep(100);
    expect(victim.closed).toBeNull();
    expect(server.app.agentChannel.isConnected("victim-host")).toBe(true);
    const list = await server.api("/agents/victim-host/browse?path=/var/log");
    expect(list.status).toBe(200);
    const after = await snapshot("victim-host", second.id);
    expect(after.record).toEqual(before.record);
    expect(after.uses).toBe(before.uses);
    expect(after.enrolls).toBe(before.enrolls);
    expect((await snapshot("victim-host", shared.id)).uses).toBe(sharedUses);
    victim.ws.close();
    other.ws.close();
  });

  test("a host that lost its credential comes back only after an operator's audited re-enroll; its old credential is refused afterwards", async () => {
    const { token } = await agentToken({ maxUses: 3 });
    const first = await FakeAgent.connect(token, "rebuilt-host");
    const old = credentials.get("rebuilt-host")!;
    first.ws.close();
    await until(async () => first.closed !== null, 2000);
    expect(await refusedUpgrade(token, "rebuilt-host")).toEqual({ status: 401, code: "agent_credential_required" });

    const reader = await tokenWithScopes(server, ["agents:read"]);
    expect((await server.api("/agents/rebuilt-host/re-enroll", { method: "POST", token: reader })).status).toBe(403);
    expect((await server.call<{ reenroll: boolean }>("/agents/rebuilt-host")).reenroll).toBe(false);
    expect((await server.api("/agents/nobody/re-enroll", { method: "POST" })).status).toBe(404);
    const allowed = await server.api("/agents/rebuilt-host/re-enroll", { method: "POST" });
    expect(allowed.status).toBe(202);
    expect((await server.call<{ reenroll: boolean }>("/agents/rebuilt-host")).reenroll).toBe(true);

    const rebuilt = await FakeAgent.connect(token, "rebuilt-host", null);
    const fresh = credentials.get("rebuilt-host")!;
    expect(fresh).not.toBe(old);
    expect((await server.call<{ reenroll: boolean }>("/agents/rebuilt-host")).reenroll).toBe(false);
    rebuilt.ws.close();
    await until(async () => rebuilt.closed !== null, 2000);
    expect(await refusedUpgrade(token, "rebuilt-host", old)).toEqual({ status: 401, code: "agent_credential_required" });
    const back = await FakeAgent.connect(token, "rebuilt-host");
    back.ws.close();

    const audit = await server.call<{ items: { action: string; target: unknown }[] }>("/audit?limit=50");
    const actions = audit.items.map((e) => e.action);
    expect(actions).toContain("agent.reenroll.allow");
    expect(actions).toContain("agent.reenroll");
  });

  test("a host enrolled before credentials existed gets one on its next connection with its own token; then it is required", async () => {
    const { token, id } = await agentToken({ maxUses: null });
    const legacy = {
      id: "legacy-host",
      name: "legacy-host",
      environment: "production",
      version: null,
      tokenId: id,
      status: "offline",
      enrolledAt: new Date().toISOString(),
      connectedAt: null,
      lastSeen: null,
      host: null,
      browse: null,
      discovery: null,
      discoveredAt: null,
    };
    await server.app.store.write([{ op: "put", collection: AGENTS, id: "legacy-host", data: legacy, expect: "absent" }], []);
    const other = await agentToken();
    expect(await refusedUpgrade(other.token, "legacy-host")).toEqual({ status: 401, code: "agent_credential_required" });
    const agent = await FakeAgent.connect(token, "legacy-host", null);
    expect(credentials.get("legacy-host")).toMatch(/^svcag_/);
    agent.ws.close();
    await until(async () => agent.closed !== null, 2000);
    expect(await refusedUpgrade(token, "legacy-host")).toEqual({ status: 401, code: "agent_credential_required" });
  });

  test("svc-agent's channel stores the issued credential (0600) and presents it after a restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-agent-state-"));
    const { token } = await agentToken({ maxUses: 1 });
    const quiet = () => {};
    const log: Logger = { debug: quiet, info: quiet, warn: quiet, error: quiet };
    const run = () => {
      const file = new CredentialFile(join(dir, "state"), "real-agent");
      const channel = new RealAgentChannel({
        url: wsUrl,
        token,
        agentId: "real-agent",
        caCertPath: null,
        insecureSkipVerify: false,
        log,
        credential: () => file.current,
        credentialIssued: (value) => file.save(value),
        hello: async () => ({
          type: "hello",
          agentId: "real-agent",
          version: "0.1.0",
          environment: "production",
          host: HOST,
          browse: { enabled: true, allowedRoots: [] },
        }),
        handle: async () => ({}),
        delays: { baseMs: 20, maxMs: 50, refusedMs: 60_000 },
      });
      channel.start();
      return { file, channel };
    };
    try {
      const first = run();
      await until(async () => first.file.current !== null && first.channel.connected, 3000);
      const path = join(dir, "state", "credential.json");
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(statSync(join(dir, "state")).mode & 0o777).toBe(0o700);
      expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ agentId: "real-agent", credential: first.file.current });
      first.channel.stop();
      // The single-use token is used up: only the stored credential lets the restarted agent back in.
      const second = run();
      await until(async () => second.channel.connected, 3000);
      expect(second.file.current).toBe(first.file.current);
      second.channel.stop();
      // Another id does not read this one's credential.
      expect(new CredentialFile(join(dir, "state"), "other-agent").current).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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
      if (m.type === "browse.sample")
        return { result: { path: m.path, mode: m.mode, from: m.from, size: 3, binary: false, content: "hi\n", lines: 1, truncated: false } };
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
