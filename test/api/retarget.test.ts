/**
 * Attribute changes are config changes (issue 22 part 4), over a real server,
 * a real OpAMP WebSocket agent and a real remote-config poller: a tag edit or
 * a reconnect with a new description renders the collector again at the
 * commit it is on and delivers what changed without a publish, recorded as
 * "attributes" in its history and as a rollout of kind attributes (an
 * operator's edit under their name, issue 33 part 3; a report under the
 * system's); an edit that changes nothing adds nothing; a rolled-back
 * collector stays on its commit; an edit that would make an Alloy collector
 * match a pipeline it cannot run is refused, and a report that does so is
 * kept as the collector's render failure.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../harness.ts";
import { remoteConfigClient } from "../remotecfg/client.ts";
import { applied, description, RawAgent, until, uuidBytes } from "../opamp/helpers.ts";
import { RemoteConfigStatuses, type ServerToAgent } from "../../server/gen/opamp/v1/opamp_pb.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

interface Entry {
  seq: number;
  commit: string;
  hash: string;
  actor: string;
  cause?: string;
  rollbackOf?: number;
}
const history = async (id: string) =>
  await call<{ items: Entry[]; renderFailure: { commit: string; error: string } | null }>(`/collectors/${id}/config-history`);
const body = (message: ServerToAgent) => new TextDecoder().decode(message.remoteConfig!.config!.configMap[""]!.body);

let names = 0;
/** A filelog source reading `path`, and a pipeline from it to one OTLP destination, selecting by `matchers`. */
async function pipeline(path: string, matchers: string[]): Promise<{ id: string; source: string; name: string }> {
  const name = `p${++names}`;
  const source = await call<{ id: string }>("/sources", "POST", { name: `src-${name}`, type: "filelog", config: { include: [path] } });
  const destination = await call<{ id: string }>("/destinations", "POST", {
    name: `dst-${name}`,
    type: "otlphttp",
    config: { endpoint: "https://otlp.example.com" },
  });
  const topology = {
    nodes: [
      { id: "in", kind: "source", ref: source.id },
      { id: "out", kind: "destination", ref: destination.id },
    ],
    edges: [{ id: "e1", source: "in", target: "out" }],
  };
  const created = await call<{ id: string }>("/pipelines", "POST", { name, signal: "logs", topology, matchers });
  return { id: created.id, source: source.id, name };
}

async function commitAndPublish(message: string): Promise<string> {
  await call("/commit", "POST", { message });
  return (await call<{ commit: string }>("/publish", "POST")).commit;
}

async function connect(collectorId: string, attrs: Record<string, string>, nonIdentifying: Record<string, string> = {}, uid = uuidBytes()) {
  const token = (await call<{ token: string }>(`/collectors/${collectorId}/otlp-token`, "POST")).token;
  const agent = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, token, uid);
  await agent.call({ agentDescription: description(attrs, nonIdentifying) });
  return { agent, token };
}

test("a tag edit gives newly matching collectors the pipeline without a publish; an edit that changes no config adds no history", async () => {
  await pipeline("/var/log/edge.log", ["team=edge"]);
  const otel = await call<{ id: string }>("/collectors", "POST", { name: "edge-otel" });
  const alloy = await call<{ id: string }>("/collectors", "POST", { name: "edge-alloy", managementMode: "rcfg-remotecfg" });
  const { agent } = await connect(otel.id, { "service.name": "edge-otel" });
  const published = await commitAndPublish("Edge pipeline");
  expect(await server.app.delivery.target(otel.id)).toBeNull();

  const pushed = agent.next((m) => m.remoteConfig !== undefined && body(m).includes("/var/log/edge.log"));
  const edited = await call<{ matched: number; changed: number; rollout: { id: string; kind: string; actor: string; changed: string[] } }>(
    "/collectors/tags",
    "POST",
    {
      match: ['collector.name=~"edge-.*"'],
      set: { team: "edge" },
    },
  );
  expect({ ...edited, rollout: { ...edited.rollout, changed: [...edited.rollout.changed].sort() } }).toMatchObject({
    matched: 2,
    changed: 2,
    rollout: { kind: "attributes", actor: "sa:admin", changed: [otel.id, alloy.id].sort() },
  });
  const message = await pushed;
  await agent.call({ remoteConfigStatus: applied(message.remoteConfig!.configHash) });
  await until(async () => (await server.app.delivery.target(otel.id))?.target.state === "current");
  agent.close();

  const rcfg = remoteConfigClient(server.base, (await call<{ token: string }>(`/collectors/${alloy.id}/otlp-token`, "POST")).token);
  const polled = await rcfg.getConfig({ id: alloy.id });
  expect(polled.content).toContain("/var/log/edge.log");

  for (const id of [otel.id, alloy.id]) {
    const { items, renderFailure } = await history(id);
    expect(items.map(({ seq, commit, actor, cause }) => ({ seq, commit, actor, cause }))).toEqual([
      { seq: 1, commit: published, actor: "sa:admin", cause: "attributes" },
    ]);
    expect(renderFailure).toBeNull();
  }
  // Delivered with the edit by the operator's rollout, not by a system re-target after it.
  const [audited] = (await call<{ items: { actor: string; resourceId: string; details: { changed: number } }[] }>("/audit?action=config.attributes&limit=1"))
    .items;
  expect(audited).toMatchObject({ actor: "sa:admin", resourceId: edited.rollout.id, details: { changed: 2 } });
  expect((await call<{ items: unknown[] }>("/audit?action=config.retarget&limit=100")).items).toEqual([]);

  // A tag no matcher reads: rendered again, same hash, nothing recorded.
  expect(await call("/collectors/tags", "POST", { match: ['collector.name=~"edge-.*"'], set: { note: "unrelated" } })).toEqual({
    matched: 2,
    changed: 2,
    rollout: null,
  });
  await server.app.retargeting.idle();
  for (const id of [otel.id, alloy.id]) expect((await history(id)).items).toHaveLength(1);
  // Not matching any more: the pipeline goes away the same way.
  await call(`/collectors/${alloy.id}`, "PATCH", { tags: {} });
  await server.app.retargeting.idle();
  const after = await rcfg.getConfig({ id: alloy.id, hash: polled.hash });
  expect(after.notModified).toBe(false);
  expect(after.content).not.toContain("/var/log/edge.log");
  expect((await history(alloy.id)).items.map((e) => e.cause)).toEqual(["attributes", "attributes"]);
});

test("a reconnect with a new AgentDescription attribute on a trusted key re-targets the collector", async () => {
  // A reported attribute targets only once an admin trusts its key (test/api/trusted-targeting.test.ts).
  await call("/system/trusted-attributes", "PUT", { keys: ["region"] });
  await pipeline("/var/log/eu.log", ['region="eu-west"']);
  const roaming = await call<{ id: string }>("/collectors", "POST", { name: "roaming" });
  const uid = uuidBytes();
  const first = await connect(roaming.id, { "service.name": "roaming" }, {}, uid);
  const published = await commitAndPublish("EU pipeline");
  expect(await server.app.delivery.target(roaming.id)).toBeNull();
  first.agent.close();
  await first.agent.waitClosed();

  const agent = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, first.token, uid);
  const pushed = agent.next((m) => m.remoteConfig !== undefined && body(m).includes("/var/log/eu.log"));
  agent.send({ agentDescription: description({ "service.name": "roaming" }, { region: "eu-west" }) });
  await pushed;
  agent.close();
  const { items } = await history(roaming.id);
  expect(items.map(({ commit, cause }) => ({ commit, cause }))).toEqual([{ commit: published, cause: "attributes" }]);
});

test("a reconnect with changed attributes is answered with the config rendered for them alone: no stale config first, no rollback recorded", async () => {
  // The zone the collector reports targets only once trusted, and a key is trusted before any pipeline reads it.
  const { listed } = await call<{ listed: string[] }>("/system/trusted-attributes");
  await call("/system/trusted-attributes", "PUT", { keys: [...listed, "zone"] });
  await pipeline("/var/log/zone-a.log", ['zone="a"']);
  await pipeline("/var/log/zone-b.log", ['zone="b"']);
  const mover = await call<{ id: string }>("/collectors", "POST", { name: "mover" });
  const uid = uuidBytes();
  const first = await connect(mover.id, { "service.name": "mover" }, { zone: "a" }, uid);
  await server.app.retargeting.idle();
  const pushedA = first.agent.next((m) => m.remoteConfig !== undefined);
  await commitAndPublish("Zones");
  const configA = await pushedA;
  expect(body(configA)).toContain("/var/log/zone-a.log");
  await first.agent.call({ remoteConfigStatus: applied(configA.remoteConfig!.configHash) });
  await until(async () => (await server.app.delivery.target(mover.id))?.target.state === "current");
  first.agent.close();
  await first.agent.waitClosed();

  // As a restarted supervisor: everything in its first message, the config it runs (zone a) and its new zone.
  const agent = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, first.token, uid);
  const reply = await agent.call({
    agentDescription: description({ "service.name": "mover" }, { zone: "b" }),
    remoteConfigStatus: applied(configA.remoteConfig!.configHash),
  });
  expect(reply.remoteConfig).toBeDefined();
  expect(body(reply)).toContain("/var/log/zone-b.log");
  expect(body(reply)).not.toContain("/var/log/zone-a.log");
  await agent.call({ remoteConfigStatus: applied(reply.remoteConfig!.configHash, RemoteConfigStatuses.RemoteConfigStatuses_APPLYING) });
  await agent.call({ remoteConfigStatus: applied(reply.remoteConfig!.configHash) });
  await until(async () => (await server.app.delivery.target(mover.id))?.target.state === "current");
  // Everything the session was sent: one config, the new one.
  expect(agent.received.filter((m) => m.remoteConfig !== undefined)).toHaveLength(1);
  agent.close();
  const items = await until(async () => {
    const { items } = await call<{ items: (Entry & { state: string; collectorRolledBackTo?: number })[] }>(`/collectors/${mover.id}/config-history`);
    return items.at(-1)?.state === "current" && items;
  });
  expect(items.map(({ cause, state, collectorRolledBackTo }) => ({ cause, state, collectorRolledBackTo }))).toEqual([
    { cause: "publish", state: "superseded", collectorRolledBackTo: undefined },
    { cause: "attributes", state: "current", collectorRolledBackTo: undefined },
  ]);
  expect((await server.app.delivery.target(mover.id))!.target.collectorRollback).toBeUndefined();
});

test("the collector is rendered at the latest fleet publish even when that publish left its older target as it was", async () => {
  await pipeline("/var/log/base.log", ['site="s1"']);
  const steady = await call<{ id: string }>("/collectors", "POST", { name: "steady", tags: { site: "s1" } });
  const first = await commitAndPublish("Site pipeline");
  expect((await server.app.delivery.target(steady.id))!.target.targetCommit).toBe(first);
  await pipeline("/var/log/extra.log", ['extra="yes"']);
  const second = await commitAndPublish("Extra pipeline");
  // The second publish rendered it the same: its target still names the first commit.
  expect((await server.app.delivery.target(steady.id))!.target.targetCommit).toBe(first);

  await call(`/collectors/${steady.id}`, "PATCH", { tags: { site: "s1", extra: "yes" } });
  await server.app.retargeting.idle();
  const current = (await server.app.delivery.target(steady.id))!;
  expect(current.target.targetCommit).toBe(second);
  expect(current.rendered.body).toContain("/var/log/extra.log");
});

test("a rolled-back collector is pinned through attribute changes; unpinned, it is rendered at its rolled-back commit", async () => {
  const one = await pipeline("/var/log/one.log", ['tier=~"one|two"']);
  await pipeline("/var/log/two.log", ['tier="two"']);
  const rb = await call<{ id: string }>("/collectors", "POST", { name: "rb", tags: { tier: "one" } });
  const old = await commitAndPublish("Tiers");
  await call(`/sources/${one.source}`, "PUT", { name: `src-${one.name}`, type: "filelog", config: { include: ["/var/log/one-new.log"] } });
  const newer = await commitAndPublish("Tier one moves");
  expect((await server.app.delivery.target(rb.id))!.target.targetCommit).toBe(newer);
  const rollback = await call<Entry>(`/collectors/${rb.id}/rollback`, "POST");
  expect(rollback.commit).toBe(old);

  await call(`/collectors/${rb.id}`, "PATCH", { tags: { tier: "two" } });
  await server.app.retargeting.idle();
  expect((await history(rb.id)).items.at(-1)).toMatchObject({ seq: rollback.seq, commit: old, cause: "rollback" });

  expect((await server.api(`/collectors/${rb.id}/pin`, { method: "DELETE" })).status).toBe(204);
  await call(`/collectors/${rb.id}`, "PATCH", { tags: { tier: "two", rack: "r1" } });
  await server.app.retargeting.idle();
  const { items } = await history(rb.id);
  expect(items.at(-1)).toMatchObject({ seq: rollback.seq + 1, commit: old, cause: "attributes", actor: "sa:admin" });
  const rendered = (await server.app.delivery.target(rb.id))!.rendered.body;
  expect(rendered).toContain("/var/log/one.log");
  expect(rendered).not.toContain("/var/log/one-new.log");
  expect(rendered).toContain("/var/log/two.log");
});

test("an edit that would make an Alloy collector match a pipeline it cannot run is refused; a report that does is kept as its render failure", async () => {
  // Trusted before any pipeline reads it (a trust change may not move collectors; test/api/trusted-targeting.test.ts).
  const trusted = await call<{ listed: string[] }>("/system/trusted-attributes");
  await call("/system/trusted-attributes", "PUT", { keys: [...new Set([...trusted.listed, "region", "net"])] });
  const destination = await call<{ id: string }>("/destinations", "POST", { name: "net-gw", type: "otlphttp", config: { endpoint: "https://gw.example.com" } });
  const syslog = await call<{ id: string }>("/sources", "POST", { name: "net-syslog", type: "syslog", config: {} });
  const filtered = await call<{ id: string }>("/pipelines", "POST", {
    name: "by body",
    signal: "logs",
    matchers: ["net=edge"],
    topology: {
      nodes: [
        { id: "in", kind: "source", ref: syslog.id },
        { id: "f", kind: "processor", processor: { type: "filter", config: { logs: { log_record: ['IsMatch(body, "healthz")'] } } } },
        { id: "out", kind: "destination", ref: destination.id },
      ],
      edges: [
        { id: "e1", source: "in", target: "f" },
        { id: "e2", source: "f", target: "out" },
      ],
    },
  });
  const alloy = await call<{ id: string; tags: Record<string, string> }>("/collectors", "POST", {
    name: "alloy-net",
    managementMode: "rcfg-remotecfg",
    tags: { rack: "r1" },
  });
  const otel = await call<{ id: string }>("/collectors", "POST", { name: "otel-net" });

  const refused = async (res: Response) => {
    const { error } = (await res.json()) as { error: { code: string; details: { path: string; message: string }[] } };
    return { status: res.status, code: error.code, details: error.details };
  };
  const expected = (id: string, name: string) => ({
    status: 409,
    code: "breaks_matched_collectors",
    details: [
      {
        path: `collectors/${id}`,
        message: expect.stringContaining(
          `Alloy collector ${name} (${id}) would match pipeline "by body" (${filtered.id}), which it cannot run: pipeline "by body" at topology.nodes[f]`,
        ),
      },
    ],
  });
  expect(await refused(await server.api("/collectors/tags", { method: "POST", json: { match: ['collector.name=~".*-net"'], set: { net: "edge" } } }))).toEqual(
    expected(alloy.id, "alloy-net"),
  );
  expect(await refused(await server.api(`/collectors/${alloy.id}`, { method: "PATCH", json: { tags: { rack: "r1", net: "edge" } } }))).toEqual(
    expected(alloy.id, "alloy-net"),
  );
  expect(
    await refused(await server.api(`/collectors/${otel.id}`, { method: "PATCH", json: { managementMode: "rcfg-remotecfg", tags: { net: "edge" } } })),
  ).toEqual(expected(otel.id, "otel-net"));
  const created = await refused(
    await server.api("/collectors", { method: "POST", json: { name: "alloy-new", managementMode: "rcfg-remotecfg", tags: { net: "edge" } } }),
  );
  expect({ status: created.status, code: created.code }).toEqual({ status: 409, code: "breaks_matched_collectors" });
  // Nothing written: the tag edit touched neither collector, and no collector was created.
  expect((await call<{ tags: Record<string, string> }>(`/collectors/${alloy.id}`)).tags).toEqual({ rack: "r1" });
  expect(await call<{ managementMode: string; tags: Record<string, string> }>(`/collectors/${otel.id}`)).toMatchObject({ managementMode: "opamp", tags: {} });
  expect((await call<{ items: unknown[] }>("/collectors?q=alloy-new")).items).toEqual([]);
  // An OpenTelemetry Collector may match it.
  expect(await call("/collectors/tags", "POST", { match: ['collector.name="otel-net"'], set: { net: "edge" } })).toEqual({
    matched: 1,
    changed: 1,
    rollout: null,
  });

  // The Alloy collector reports the attribute itself, on a key an admin trusts: nothing refuses a report, so the render fails and is kept.
  const published = await commitAndPublish("Filter by body");
  const rcfg = remoteConfigClient(server.base, (await call<{ token: string }>(`/collectors/${alloy.id}/otlp-token`, "POST")).token);
  await rcfg.getConfig({ id: alloy.id, localAttributes: { net: "edge" } });
  await server.app.retargeting.idle();
  const failed = await history(alloy.id);
  expect(failed.items).toEqual([]);
  expect(failed.renderFailure).toMatchObject({ commit: published, error: expect.stringContaining("condition") });
  expect(await server.app.delivery.target(alloy.id)).toBeNull();
  // Rendered again with the same outcome (another tag; it matched before, so the edit is not refused): nothing is written again.
  const audits = (await call<{ items: unknown[] }>("/audit?action=config.retarget&limit=200")).items.length;
  await call(`/collectors/${alloy.id}`, "PATCH", { tags: { rack: "r2" } });
  await server.app.retargeting.idle();
  expect((await history(alloy.id)).renderFailure).toMatchObject({ commit: published });
  expect((await call<{ items: unknown[] }>("/audit?action=config.retarget&limit=200")).items).toHaveLength(audits);
  // It stops reporting it: it needs no config any more, and the failure is gone.
  await rcfg.getConfig({ id: alloy.id, localAttributes: { net: "core" } });
  await server.app.retargeting.idle();
  expect((await history(alloy.id)).renderFailure).toBeNull();
});

test("a storm of attribute changes no operator deployed is drained in batches of at most 500 collectors, one audit entry and rollout each", async () => {
  await pipeline("/var/log/storm.log", ['storm="yes"']);
  await commitAndPublish("Storm pipeline");
  const ids: string[] = [];
  for (let i = 0; i < 1200; i++) ids.push((await server.app.collectors.create({ actor: "sa:admin", remoteAddr: null }, { name: `storm-${i}` })).id);
  await server.app.retargeting.idle();
  const before = (await call<{ items: unknown[] }>("/audit?action=config.retarget&limit=1000")).items.length;

  // Changed through the domain with no deployment attached, as a collector's own reports and first contacts are (the API's edits deploy themselves).
  const storm = await server.app.collectors.editTags(
    { actor: "system", remoteAddr: null },
    (c) => c.name.startsWith("storm-"),
    { set: { storm: "yes" }, remove: [] },
    {},
  );
  expect(storm).toEqual({ matched: 1200, changed: 1200 });
  await server.app.retargeting.idle();
  // Newest first: the entries this edit added.
  const all = (await call<{ items: { details: { rollout: string; collectorIds: string[]; changed: number } }[] }>("/audit?action=config.retarget&limit=1000"))
    .items;
  const entries = all.slice(0, all.length - before);
  expect(entries.length).toBeGreaterThanOrEqual(3);
  expect(entries.every((e) => e.details.collectorIds.length <= 500 && e.details.changed === e.details.collectorIds.length)).toBe(true);
  expect(entries.flatMap((e) => e.details.collectorIds).sort()).toEqual([...ids].sort());
  // Each batch is a rollout of kind attributes by the system, listed with the others.
  const rollouts = (await call<{ items: { id: string; kind: string; actor: string; changed: number }[] }>("/rollouts?limit=200")).items;
  for (const entry of entries) {
    expect(rollouts.find((r) => r.id === entry.details.rollout)).toMatchObject({
      kind: "attributes",
      actor: "system",
      changed: entry.details.collectorIds.length,
    });
  }
  const hashes = new Set(await Promise.all(ids.map(async (id) => (await server.app.delivery.target(id))!.rendered.hash)));
  expect(hashes.size).toBe(1);
});
