/**
 * Secrets on the wire to collectors (issue 20), over real sockets, on the
 * embedded store and on PostgreSQL with two replicas sharing one key (configs
 * are published and secrets sealed through one, collectors talk to the
 * other): OpAMP (the Elastic client over HTTP, a raw WebSocket agent) and
 * remote config (a Connect client) receive the plaintext, quoted as their
 * runtime's writer quotes a string, under the hash of the redacted rendering;
 * what they report back is stored redacted; a config naming a secret the
 * server cannot open is held back and shown on the target; and neither the
 * store (every collection, and a dump of the database) nor the config-history
 * and effective-config answers hold the plaintext.
 *
 * Most targets here are made by hand, so each collector can be given its
 * own secrets: the real published rendering with secret headers added as
 * render writes them (the marker, quoted), stored as publish stores it. One
 * test publishes for real from a tree holding `{secret: id}`.
 */
import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import { Database } from "bun:sqlite";
import { Code } from "@connectrpc/connect";
import { createHash, randomBytes } from "node:crypto";
import { join } from "node:path";
import { parse } from "yaml";
import { SYSTEM_ACTOR } from "../../server/audit/audit.ts";
import { DIRS, toYaml } from "../../server/configstore/layout.ts";
import { RemoteConfigStatuses as RcfgStatuses } from "../../server/gen/collector/v1/collector_pb.ts";
import { RemoteConfigStatuses } from "../../server/gen/opamp/v1/opamp_pb.ts";
import { quotedSecret } from "../../server/render/secrets.ts";
import type { RenderedConfig } from "../../server/rollout/renderer.ts";
import type { CollectorConfig, HistoryEntry } from "../../server/rollout/records.ts";
import { KEY_BYTES, Secrets } from "../../server/secrets/secrets.ts";
import { secretMarker } from "../../server/secrets/values.ts";
import { sealContext, SECRETS_COLLECTION, type SecretDoc } from "../../server/secrets/vault.ts";
import { PostgresStore } from "../../server/store/postgres.ts";
import { testDatabases, type TestDatabases } from "../../server/store/testdb.ts";
import { deploymentKit } from "../deployment.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { applyingClient } from "../opamp/elastic.ts";
import { applied, description, RawAgent, until } from "../opamp/helpers.ts";
import { connectError, remoteConfigClient } from "../remotecfg/client.ts";
import { bootstrapToken } from "../process/spawn.ts";

type Runtime = RenderedConfig["runtime"];

/** Adds headers to the otlphttp destination of a real rendering, each value a secret's marker, as render writes them. */
function withSecretHeaders(runtime: Runtime, body: string, headers: Record<string, string>): string {
  const entries = Object.entries(headers);
  const next =
    runtime === "otelcol"
      ? body.replace(/^( *)endpoint: "https:\/\/otlp\.example\.com"$/m, (line, indent: string) =>
          [line, `${indent}headers:`, ...entries.map(([name, id]) => `${indent}  ${name}: "${secretMarker(id)}"`)].join("\n"),
        )
      : body.replace(/^(\t*)endpoint = "https:\/\/otlp\.example\.com"$/m, (line, indent: string) =>
          [line, `${indent}headers = {`, ...entries.map(([name, id]) => `${indent}\t"${name}" = "${secretMarker(id)}",`), `${indent}}`].join("\n"),
        );
  if (next === body) throw new Error("the rendering has no otlphttp endpoint to add headers beside");
  return next;
}

/** What publish stores for a new target: the rendered config by hash, the collector's target and its history entry. */
async function publishByHand(server: TestServer, collectorId: string, headers: Record<string, string>): Promise<RenderedConfig> {
  const store = server.app.store;
  const current = (await store.get<CollectorConfig>("collector_config", collectorId))!.data;
  const base = (await store.get<RenderedConfig>("rendered_configs", current.targetHash))!.data;
  // Always from the plain rendering of the first publish, so each hand publish names only `headers`.
  const first = (await store.list<HistoryEntry>("config_history", { prefix: `${collectorId}/` }))[0]!.data;
  const plain = (await store.get<RenderedConfig>("rendered_configs", first.hash))!.data;
  const body = withSecretHeaders(base.runtime, plain.body, headers);
  const rendered: RenderedConfig = { ...base, body, hash: createHash("sha256").update(body).digest("hex") };
  const seq = current.targetSeq + 1;
  const time = new Date().toISOString();
  const target: CollectorConfig = {
    collectorId,
    targetHash: rendered.hash,
    targetCommit: current.targetCommit,
    targetSeq: seq,
    state: "outdated",
    error: null,
    updatedAt: time,
  };
  const entry: HistoryEntry = { seq, commit: current.targetCommit, hash: rendered.hash, time, state: "outdated", actor: "sa:test" };
  await store.write([
    { op: "put", collection: "rendered_configs", id: rendered.hash, data: rendered },
    { op: "put", collection: "collector_config", id: collectorId, data: target },
    { op: "put", collection: "config_history", id: `${collectorId}/${String(seq).padStart(10, "0")}`, data: entry, expect: "absent" },
  ]);
  return rendered;
}

interface Replicas {
  /** Publishes and seals. */
  a: TestServer;
  /** Serves the collectors. */
  b: TestServer;
  /** Everything the database holds, as text. */
  dump(): Promise<string>;
  /** Another replica on the same store with this secrets key (base64), stopped with the rest; absent where one store has one server. */
  replicaWithKey?: (key: string) => Promise<TestServer>;
  stop(): Promise<void>;
}

function suite(name: string, start: () => Promise<Replicas>, options: { rotates: boolean }) {
  describe(name, () => {
    let r: Replicas;
    const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => r.a.call<T>(path, method, json);
    // Letters and digits only, so every spelling of the plaintext (quoted, escaped) carries it as is.
    const core = `s3cr3t${randomBytes(8).toString("hex")}`;
    /** `$` (otelcol's expansion), quotes and a backslash (every quoting), a non-ASCII letter. */
    const plaintext = `Bearer ${core}-$HOME "q" \\ 'x' ü`;
    const otherCore = `0ther${randomBytes(8).toString("hex")}`;
    let secretId: string;
    const ids: Record<"http" | "ws" | "rcfg", string> = { http: "", ws: "", rcfg: "" };
    let agent: RawAgent;
    let rcfgToken: string;
    /** Hash of the hand-made otelcol rendering whose one header is `Authorization`. */
    let authorizationOnly = "";
    /** What the WebSocket agent was last sent: hash and body. */
    let wsDelivered: { hash: string; body: string };

    const targetOf = async (collectorId: string) => (await r.a.app.store.get<CollectorConfig>("collector_config", collectorId))!.data;

    beforeAll(async () => {
      r = await start();
      const routeThrough = await deploymentKit(call);
      ids.http = (await call<{ id: string }>("/collectors", "POST", { name: "otel-http" })).id;
      ids.ws = (await call<{ id: string }>("/collectors", "POST", { name: "otel-ws" })).id;
      ids.rcfg = (await call<{ id: string }>("/collectors", "POST", { name: "alloy", managementMode: "rcfg-remotecfg" })).id;
      for (const id of Object.values(ids)) await routeThrough(id);
      // What the OpAMP collectors will describe, reported ahead: a first report is an attribute change, which
      // renders them again at the published commit (rollout/retarget.ts) and would replace the hand-made targets below.
      await r.a.app.collectors.report(SYSTEM_ACTOR, ids.http, { "service.name": "otel-http" });
      await r.a.app.collectors.report(SYSTEM_ACTOR, ids.ws, { "service.name": "otel-ws" });
      await call("/commit", "POST", { message: "three collectors" });
      await call("/publish", "POST");
      const sealed = r.a.app.vault.seal(plaintext, SYSTEM_ACTOR);
      await r.a.app.store.write([sealed.op]);
      secretId = sealed.id;
    });
    afterAll(async () => {
      agent?.close();
      await r?.stop();
    });

    test("OpAMP over HTTP (Elastic client): the config arrives with the plaintext, under the hash of the redacted rendering", async () => {
      const rendered = await publishByHand(r.a, ids.http, { Authorization: secretId });
      expect(rendered.body).not.toContain(core);
      const { token } = await call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp", collectorId: ids.http });
      const configs: { hash: string; body: string }[] = [];
      const client = applyingClient({
        endpoint: `${r.b.base}/v1/opamp`,
        authorization: `Bearer ${token}`,
        heartbeatIntervalSeconds: 0.1,
        identifying: { "service.name": "otel-http" },
        onApplied: ({ hash, body }) => configs.push({ hash: Buffer.from(hash).toString("hex"), body }),
      });
      try {
        await until(async () => (await targetOf(ids.http)).state === "current");
        expect(configs).toHaveLength(1);
        const [delivered] = configs;
        expect(delivered!.hash).toBe(rendered.hash);
        expect(delivered!.body).toBe(rendered.body.replace(`"${secretMarker(secretId)}"`, () => quotedSecret("otelcol", plaintext)));
        // Valid YAML whose value the collector unescapes ($$ → $) to the plaintext.
        const yaml = parse(delivered!.body) as { exporters: Record<string, { headers: Record<string, string> }> };
        expect(yaml.exporters["otlphttp/backend"]!.headers.Authorization).toBe(plaintext.replaceAll("$", "$$$$"));
      } finally {
        await client.shutdown();
      }
    });

    test("OpAMP over WebSocket: a new target is pushed with the plaintext; the effective config, status and health it reports are stored redacted", async () => {
      const { token } = await call<{ token: string }>(`/collectors/${ids.ws}/otlp-token`, "POST");
      agent = await RawAgent.connect(`${r.b.base.replace(/^http/, "ws")}/v1/opamp`, token);
      const first = await agent.call({ agentDescription: description({ "service.name": "otel-ws" }) });
      expect(first.remoteConfig).toBeDefined();
      await agent.call({ remoteConfigStatus: applied(first.remoteConfig!.configHash) });

      const pushed = agent.next((m) => m.remoteConfig !== undefined);
      const rendered = await publishByHand(r.a, ids.ws, { Authorization: secretId });
      authorizationOnly = rendered.hash;
      const message = await pushed;
      const body = new TextDecoder().decode(message.remoteConfig!.config!.configMap[""]!.body);
      expect(Buffer.from(message.remoteConfig!.configHash).toString("hex")).toBe(rendered.hash);
      expect(body).toContain(`Authorization: ${quotedSecret("otelcol", plaintext)}`);

      // The collector quotes what it was given in every way it might.
      const reported = [
        body,
        `raw: ${plaintext}`,
        `json: ${JSON.stringify(plaintext)}`,
        `single: '${plaintext.replaceAll("'", "''")}'`,
        `alloy: ${quotedSecret("alloy", plaintext)}`,
      ].join("\n");
      await agent.call({
        remoteConfigStatus: applied(
          message.remoteConfig!.configHash,
          RemoteConfigStatuses.RemoteConfigStatuses_FAILED,
          `exporter refused header "Authorization: ${plaintext}"`,
        ),
        effectiveConfig: { configMap: { configMap: { "": { body: new TextEncoder().encode(reported), contentType: "text/yaml" } } } },
      });
      const target = await until(async () => {
        const t = await targetOf(ids.ws);
        return t.state === "failed" && t;
      });
      expect(target.error).toBe(`exporter refused header "Authorization: ${secretMarker(secretId)}"`);
      const effective = await until(() => r.a.app.delivery.effective(ids.ws));
      const stored = effective.files[0]!.body;
      expect(stored).not.toContain(core);
      expect(stored.split(secretMarker(secretId)).length - 1).toBe(5);
      expect(stored).toContain(`json: "${secretMarker(secretId)}"`);

      // Applied, but unhealthy: the collector shows its health error, redacted.
      await agent.call({
        remoteConfigStatus: applied(message.remoteConfig!.configHash),
        health: { healthy: false, lastError: `401 with ${JSON.stringify(plaintext)}` },
      });
      const collector = await until(async () => {
        const c = await call<{ health: { error: string | null } | null }>(`/collectors/${ids.ws}`);
        return c.health?.error?.startsWith("401") && c;
      });
      expect(collector.health!.error).toBe(`401 with "${secretMarker(secretId)}"`);
    });

    test("remote config: the content has the plaintext quoted for Alloy, under the redacted hash; what Alloy reports is stored redacted", async () => {
      const rendered = await publishByHand(r.a, ids.rcfg, { Authorization: secretId });
      rcfgToken = (await call<{ token: string }>(`/collectors/${ids.rcfg}/otlp-token`, "POST")).token;
      const rcfg = remoteConfigClient(r.b.base, rcfgToken);
      const answer = await rcfg.getConfig({ id: ids.rcfg });
      expect(answer.hash).toBe(rendered.hash);
      expect(answer.content).toBe(rendered.body.replace(`"${secretMarker(secretId)}"`, () => quotedSecret("alloy", plaintext)));
      expect(answer.content).toContain(`"Authorization" = ${quotedSecret("alloy", plaintext)},`);
      expect((await rcfg.getConfig({ id: ids.rcfg, hash: answer.hash })).notModified).toBe(true);

      await rcfg.getConfig({
        id: ids.rcfg,
        hash: answer.hash,
        remoteConfigStatus: { status: RcfgStatuses.RemoteConfigStatuses_FAILED, errorMessage: `headers: ${quotedSecret("alloy", plaintext)} is not allowed` },
        effectiveConfig: { configMap: { configMap: { "": { body: new TextEncoder().encode(answer.content), contentType: "text/plain" } } } },
      });
      const target = await targetOf(ids.rcfg);
      expect(target).toMatchObject({ state: "failed", error: `headers: "${secretMarker(secretId)}" is not allowed` });
      const effective = (await r.a.app.delivery.effective(ids.rcfg))!.files[0]!.body;
      expect(effective).toBe(rendered.body);
      const collector = await call<{ health: { error: string } }>(`/collectors/${ids.rcfg}`);
      expect(collector.health.error).toBe(target.error!);
    });

    test("redaction takes the longest spelling first, leaves markers alone (even a plaintext found in a marker's text) and changes nothing the second time", async () => {
      const short = `k${randomBytes(4).toString("hex")}`;
      const sealed = [short, `${short}-long`, "secret"].map((text) => r.a.app.vault.seal(text, SYSTEM_ACTOR));
      await r.a.app.store.write(sealed.map((s) => s.op));
      const rendered = await publishByHand(r.a, ids.http, { "X-Short": sealed[0]!.id, "X-Long": sealed[1]!.id, "X-Word": sealed[2]!.id });
      await until(async () => (await r.b.app.delivery.target(ids.http))?.target.targetHash === rendered.hash);
      const [m1, m2, m3] = sealed.map((s) => secretMarker(s.id));
      const once = await r.b.app.delivery.redact(ids.http, `a ${short}-long b ${short} c secret d ${secretMarker(secretId)}`);
      expect(once).toBe(`a ${m2} b ${m1} c ${m3} d ${secretMarker(secretId)}`);
      expect(await r.b.app.delivery.redact(ids.http, once)).toBe(once);
      // Secrets of configs pushed to it before stay redacted: the collector may still run one.
      expect(await r.b.app.delivery.redact(ids.http, plaintext)).toBe(secretMarker(secretId));
      // Another collector was never sent these.
      expect(await r.b.app.delivery.redact(ids.rcfg, short)).toBe(short);
    });

    test("a config naming a secret the server cannot open is not sent: the target says why, the log says it once without the value, the next contact after a fix delivers", async () => {
      // Sealed under a key neither replica holds (as after a key mix-up between replicas).
      const otherPlaintext = `Bearer ${otherCore}`;
      const unopenable = Bun.randomUUIDv7();
      const doc = (sealed: string): SecretDoc => ({ sealed, createdAt: new Date().toISOString(), createdBy: "sa:test" });
      const foreign = new Secrets([randomBytes(KEY_BYTES)]).seal(otherPlaintext, sealContext(SECRETS_COLLECTION, unopenable));
      await r.a.app.store.write([{ op: "put", collection: SECRETS_COLLECTION, id: unopenable, data: doc(foreign) }]);

      const logged: unknown[][] = [];
      const error = spyOn(r.b.app.logger, "error").mockImplementation(((...args: unknown[]) => void logged.push(args)) as never);
      try {
        const mark = agent.received.length;
        const ws = await publishByHand(r.a, ids.ws, { Authorization: secretId, "X-Api-Key": unopenable });
        const held = await until(async () => {
          const t = await targetOf(ids.ws);
          return t.targetHash === ws.hash && t.undelivered && t;
        });
        expect(held.state).toBe("failed");
        expect(held.error).toContain(`Not delivered: secret ${unopenable} cannot be read`);
        // Later messages try again, and are sent nothing while it cannot be opened.
        for (let i = 0; i < 3; i++) expect((await agent.call()).remoteConfig).toBeUndefined();
        expect(agent.received.slice(mark).some((m) => m.remoteConfig !== undefined)).toBe(false);
        const status = await call<{ collectors: { id: string; state: string; error?: string }[] }>("/publish/status");
        expect(status.collectors.find((c) => c.id === ids.ws)).toEqual({ id: ids.ws, state: "failed", error: held.error! });

        const alloy = await publishByHand(r.a, ids.rcfg, { Authorization: unopenable });
        // The serving replica learns of the new target from the store's change feed.
        await until(async () => (await r.b.app.delivery.target(ids.rcfg))?.target.targetHash === alloy.hash);
        const rcfg = remoteConfigClient(r.b.base, rcfgToken);
        for (let i = 0; i < 2; i++) expect((await connectError(rcfg.getConfig({ id: ids.rcfg }))).code).toBe(Code.Unavailable);
        await until(async () => (await targetOf(ids.rcfg)).undelivered);

        const about = (hash: string) => logged.filter((args) => (args[0] as { hash?: string }).hash === hash);
        expect(about(ws.hash)).toHaveLength(1);
        expect(about(alloy.hash)).toHaveLength(1);
        expect(about(ws.hash)[0]![0]).toMatchObject({ collectorId: ids.ws, secretId: unopenable });
        expect(JSON.stringify(logged, (_, v) => (v instanceof Error ? `${v.message} ${v.stack}` : v))).not.toContain(otherCore);

        // Fixed: sealed under the replicas' key. Failures are not cached, so the next contact delivers.
        const current = (await r.a.app.store.get<SecretDoc>(SECRETS_COLLECTION, unopenable))!;
        const resealed = r.a.app.secrets.seal(otherPlaintext, sealContext(SECRETS_COLLECTION, unopenable));
        await r.a.app.store.write([{ op: "put", collection: SECRETS_COLLECTION, id: unopenable, data: doc(resealed), expect: current.version }]);
        const reply = await agent.call();
        const body = new TextDecoder().decode(reply.remoteConfig!.config!.configMap[""]!.body);
        expect(body).toContain(`X-Api-Key: ${quotedSecret("otelcol", otherPlaintext)}`);
        expect(Buffer.from(reply.remoteConfig!.configHash).toString("hex")).toBe(ws.hash);
        wsDelivered = { hash: ws.hash, body };
        const delivered = await until(async () => {
          const t = await targetOf(ids.ws);
          return t.state === "applying" && t;
        });
        expect(delivered.error).toBeNull();
        expect(delivered.undelivered).toBeUndefined();
        const answer = await rcfg.getConfig({ id: ids.rcfg });
        expect(answer.content).toContain(`"Authorization" = ${quotedSecret("alloy", otherPlaintext)},`);
        expect(await targetOf(ids.rcfg)).toMatchObject({ state: "applying", error: null });
      } finally {
        error.mockRestore();
      }
    });

    test.if(options.rotates)(
      "after the key is rotated (every secret sealed again under a new key, a replica on it) the delivered configs are byte-identical and their hashes unchanged",
      async () => {
        const rcfgBefore = await remoteConfigClient(r.b.base, rcfgToken).getConfig({ id: ids.rcfg });
        const key = randomBytes(KEY_BYTES);
        const next = new Secrets([key]);
        for (const doc of await r.a.app.store.list<SecretDoc>(SECRETS_COLLECTION)) {
          const context = sealContext(SECRETS_COLLECTION, doc.id);
          const sealed = next.seal(r.a.app.secrets.openString(doc.data.sealed, context), context);
          await r.a.app.store.write([{ op: "put", collection: SECRETS_COLLECTION, id: doc.id, data: { ...doc.data, sealed }, expect: doc.version }]);
        }
        const c = await r.replicaWithKey!(key.toString("base64"));

        const rcfg = remoteConfigClient(c.base, rcfgToken);
        const rcfgAfter = await rcfg.getConfig({ id: ids.rcfg });
        expect(rcfgAfter.hash).toBe(rcfgBefore.hash);
        expect(rcfgAfter.content).toBe(rcfgBefore.content);
        expect((await rcfg.getConfig({ id: ids.rcfg, hash: rcfgBefore.hash })).notModified).toBe(true);

        const { token } = await call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp", collectorId: ids.ws });
        const rotated = await RawAgent.connect(`${c.base.replace(/^http/, "ws")}/v1/opamp`, token);
        try {
          const first = await rotated.call({ agentDescription: description({ "service.name": "otel-ws" }) });
          expect(Buffer.from(first.remoteConfig!.configHash).toString("hex")).toBe(wsDelivered.hash);
          expect(new TextDecoder().decode(first.remoteConfig!.config!.configMap[""]!.body)).toBe(wsDelivered.body);
          // Reporting the hash it runs: nothing is sent again.
          expect((await rotated.call({ remoteConfigStatus: applied(first.remoteConfig!.configHash) })).remoteConfig).toBeUndefined();
        } finally {
          rotated.close();
        }
      },
    );

    test("published for real from a tree whose stored header is {secret: id}: render writes the otelcol headers as these tests did by hand, and the collectors get the plaintext", async () => {
      const { items } = await call<{ items: { id: string; name: string }[] }>("/destinations");
      const path = `${DIRS.destinations}${items.find((d) => d.name === "backend")!.id}.yaml`;
      const file = (await r.a.app.store.get<{ text: string }>("worktree", path))!;
      const record = parse(file.data.text) as { config: Record<string, unknown> };
      // As the write path stores a sealed value: its id, never the plaintext.
      const text = toYaml({ ...record, config: { ...record.config, headers: { Authorization: { secret: secretId } } } });
      await r.a.app.configStore.edit([{ path, text, expect: file.version }], []);
      await call("/commit", "POST", { message: "the backend authenticates" });
      await call("/publish", "POST");

      // The same bytes as the hand-made rendering with this one header (so the WebSocket agent, which ran that, is sent nothing new).
      expect((await r.a.app.delivery.target(ids.ws))!.rendered.hash).toBe(authorizationOnly);

      const http = (await r.a.app.delivery.target(ids.http))!.rendered;
      expect(http.body).toContain(`Authorization: "${secretMarker(secretId)}"`);
      const { token } = await call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp", collectorId: ids.http });
      const fresh = await RawAgent.connect(`${r.b.base.replace(/^http/, "ws")}/v1/opamp`, token);
      try {
        const first = await fresh.call({ agentDescription: description({ "service.name": "otel-http" }) });
        expect(Buffer.from(first.remoteConfig!.configHash).toString("hex")).toBe(http.hash);
        const body = new TextDecoder().decode(first.remoteConfig!.config!.configMap[""]!.body);
        expect(body).toBe(http.body.replace(`"${secretMarker(secretId)}"`, () => quotedSecret("otelcol", plaintext)));
      } finally {
        fresh.close();
      }

      const alloy = (await r.a.app.delivery.target(ids.rcfg))!.rendered;
      expect(alloy.body).toContain(`"${secretMarker(secretId)}"`);
      await until(async () => (await r.b.app.delivery.target(ids.rcfg))?.target.targetHash === alloy.hash);
      const answer = await remoteConfigClient(r.b.base, rcfgToken).getConfig({ id: ids.rcfg });
      expect(answer.hash).toBe(alloy.hash);
      expect(answer.content).toBe(alloy.body.replace(`"${secretMarker(secretId)}"`, () => quotedSecret("alloy", plaintext)));
    });

    test("neither the store, a dump of its database, nor the history and effective-config answers hold a plaintext", async () => {
      for (const collection of await r.a.app.store.collections()) {
        const text = JSON.stringify(await r.a.app.store.list(collection));
        expect({ collection, leaks: text.includes(core) || text.includes(otherCore) }).toEqual({ collection, leaks: false });
      }
      const dump = await r.dump();
      expect(dump).toContain(secretMarker(secretId));
      expect(dump).not.toContain(core);
      expect(dump).not.toContain(otherCore);

      const answers: string[] = [];
      for (const id of Object.values(ids)) {
        const { items } = await call<{ items: { seq: number }[] }>(`/collectors/${id}/config-history`);
        for (const { seq } of items) answers.push(JSON.stringify(await call(`/collectors/${id}/config-history/${seq}`)));
        answers.push(JSON.stringify(await call(`/collectors/${id}/effective-config`)));
        answers.push(JSON.stringify(await call(`/collectors/${id}`)));
      }
      answers.push(JSON.stringify(await call("/publish/status")));
      const all = answers.join("\n");
      expect(all).toContain(secretMarker(secretId));
      expect(all).not.toContain(core);
      expect(all).not.toContain(otherCore);
    });
  });
}

suite(
  "embedded store",
  async () => {
    const server = await startTestServer();
    return {
      a: server,
      b: server,
      async dump() {
        const db = new Database(join(server.dir, "state.db"), { readonly: true });
        try {
          const tables = db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'").all();
          return tables.map(({ name }) => JSON.stringify(db.query(`SELECT * FROM "${name}"`).all())).join("\n");
        } finally {
          db.close();
        }
      },
      stop: () => server.stop(),
    };
  },
  { rotates: false },
);

suite(
  "PostgreSQL, two replicas sharing the key",
  async () => {
    const pg: TestDatabases = await testDatabases();
    const uri = await pg.create("secrets_delivery");
    const env = { SVC_SECRETS_KEY: randomBytes(KEY_BYTES).toString("base64"), SVC_BOOTSTRAP_ADMINTOKEN: bootstrapToken() };
    const a = await startTestServer(env, () => PostgresStore.open(uri));
    const b = await startTestServer(env, () => PostgresStore.open(uri));
    const more: TestServer[] = [];
    return {
      a,
      b,
      async replicaWithKey(key) {
        const server = await startTestServer({ ...env, SVC_SECRETS_KEY: key }, () => PostgresStore.open(uri));
        more.push(server);
        return server;
      },
      async dump() {
        const proc = Bun.spawn(["pg_dump", "--data-only", uri], { stdout: "pipe", stderr: "pipe" });
        const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
        if (code !== 0) throw new Error(`pg_dump failed: ${err}`);
        return out;
      },
      async stop() {
        for (const server of more) await server.stop();
        await b.stop();
        await a.stop();
        await pg.dropAll();
      },
    };
  },
  { rotates: true },
);
