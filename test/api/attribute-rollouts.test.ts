/**
 * Changing who runs what is a deployment, and one collector never stops the
 * fleet (issue 33 parts 3 and 4), over a real server and real OpAMP
 * WebSocket agents: an edit of tags or environment that would change a
 * collector's config is 403 without config:publish (nothing written, the
 * refusal audited), while one that changes no config needs only
 * collectors:write (putting a collector into a config it cannot render yet
 * counts as a change); its plan is answered without writing; with the scope it
 * is delivered as a rollout of kind attributes, all at once or staged by a
 * publish's strategy; a fleet publish skips a collector whose config cannot
 * be rendered and lists it with the reason, on the rollout and on its page.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, tokenWithScopes, type TestServer } from "../harness.ts";
import { applied, description, RawAgent, until, uuidBytes } from "../opamp/helpers.ts";
import { matchedPipeline } from "../deployment.ts";
import type { PublishPlan, Rollout, RolloutStatus } from "../../shared/rollouts.ts";
import type { ErrorBody } from "../../server/http/schemas.ts";

let server: TestServer;
const agents: RawAgent[] = [];
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  for (const agent of agents) agent.close();
  await server.stop();
});

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

interface Entry {
  seq: number;
  commit: string;
  actor: string;
  cause?: string;
}
const history = (id: string) =>
  call<{ items: Entry[]; renderFailure: { commit: string; error: string; rolloutId?: string } | null }>(`/collectors/${id}/config-history`);
const rolloutCount = async () => (await call<{ items: unknown[] }>("/rollouts?limit=200")).items.length;

let names = 0;
/** A filelog source reading `path`, and a pipeline from it to one OTLP destination selected by `matchers`. */
async function pipeline(path: string, matchers: string[], endpoint = "https://otlp.example.com"): Promise<void> {
  const name = `p${++names}`;
  const source = await call<{ id: string }>("/sources", "POST", { name: `src-${name}`, type: "filelog", config: { include: [path] } });
  const destination = await call<{ id: string }>("/destinations", "POST", { name: `dst-${name}`, type: "otlphttp", config: { endpoint } });
  await matchedPipeline(call, name, source.id, destination.id, matchers);
}

async function commitAndPublish(message: string): Promise<Rollout> {
  await call("/commit", "POST", { message });
  return call<Rollout>("/publish", "POST");
}

/** A real OpAMP agent for the collector that applies every config it is sent, or, while held, only once released. */
async function applyingAgent(collectorId: string, held = false) {
  const token = (await call<{ token: string }>(`/collectors/${collectorId}/otlp-token`, "POST")).token;
  const agent = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, token, uuidBytes());
  let hold = held;
  let waiting: Uint8Array | null = null;
  agent.ws.addEventListener("message", () => {
    const config = agent.received[agent.received.length - 1]!.remoteConfig;
    if (!config) return;
    if (hold) waiting = config.configHash;
    else agent.send({ remoteConfigStatus: applied(config.configHash) });
  });
  await agent.call({ agentDescription: description({ "service.name": collectorId }) });
  agents.push(agent);
  return {
    /** Whether a config is being held. */
    holding: () => waiting !== null,
    release() {
      hold = false;
      if (waiting) agent.send({ remoteConfigStatus: applied(waiting) });
    },
  };
}

test("a tag edit that would change a config is 403 without config:publish and writes nothing; one that changes none needs only collectors:write", async () => {
  await pipeline("/var/log/pay.log", ["team=payments"]);
  const a = await call<{ id: string }>("/collectors", "POST", { name: "guard-a", tags: { rack: "r1" } });
  const b = await call<{ id: string }>("/collectors", "POST", { name: "guard-b", tags: { rack: "r1" } });
  await commitAndPublish("Payments pipeline");
  const writer = await tokenWithScopes(server, ["collectors:read", "collectors:write"]);
  const before = await rolloutCount();

  const res = await server.api("/collectors/tags", { method: "POST", token: writer, json: { match: ["rack=r1"], set: { team: "payments" } } });
  const body = (await res.json()) as ErrorBody;
  expect({ status: res.status, code: body.error.code }).toEqual({ status: 403, code: "forbidden" });
  expect(body.error.message).toContain("config:publish");
  expect(body.error.message).toContain("2 collector(s)");
  for (const id of [a.id, b.id]) {
    expect((await call<{ tags: Record<string, string> }>(`/collectors/${id}`)).tags).toEqual({ rack: "r1" });
    expect(await server.app.delivery.target(id)).toBeNull();
  }
  expect(await rolloutCount()).toBe(before);
  const [denied] = await server.app.store.queryAudit({ action: "auth.denied", limit: 1 });
  expect(denied).toMatchObject({ outcome: "denied", details: { scope: "config:publish" } });

  // The same for one collector's record: a PATCH of its tags, or of its environment when a pipeline reads it.
  const patched = await server.api(`/collectors/${a.id}`, { method: "PATCH", token: writer, json: { tags: { rack: "r1", team: "payments" } } });
  expect(patched.status).toBe(403);
  await pipeline("/var/log/prod.log", ["environment=prod"]);
  await commitAndPublish("Prod pipeline");
  expect((await server.api(`/collectors/${b.id}`, { method: "PATCH", token: writer, json: { environment: "prod" } })).status).toBe(403);
  // And a new record its tags would give a published config.
  expect((await server.api("/collectors", { method: "POST", token: writer, json: { name: "guard-new", tags: { team: "payments" } } })).status).toBe(403);
  expect((await call<{ items: unknown[] }>("/collectors?q=guard-new")).items).toEqual([]);

  // A tag no pipeline reads changes no config: collectors:write is enough, and nothing is deployed.
  const quiet = await server.api("/collectors/tags", { method: "POST", token: writer, json: { match: ["rack=r1"], set: { owner: "ops" } } });
  expect(quiet.status).toBe(200);
  expect(await quiet.json()).toEqual({ matched: 2, changed: 2, rollout: null });
  expect((await server.api(`/collectors/${a.id}`, { method: "PATCH", token: writer, json: { environment: "staging" } })).status).toBe(200);
  expect((await server.api("/collectors", { method: "POST", token: writer, json: { name: "guard-plain", tags: { rack: "r9" } } })).status).toBe(201);
  expect(await rolloutCount()).toBe(before + 1);
});

test("the plan of an edit is answered without writing; applied with config:publish, it is a rollout of kind attributes", async () => {
  await pipeline("/var/log/search.log", ["team=search"]);
  const x = await call<{ id: string }>("/collectors", "POST", { name: "plan-x", tags: { zone: "z1" } });
  const y = await call<{ id: string }>("/collectors", "POST", { name: "plan-y", tags: { zone: "z1" } });
  const published = (await commitAndPublish("Search pipeline")).commit;
  const reader = await tokenWithScopes(server, ["collectors:read", "config:read"]);
  const before = await rolloutCount();

  const edit = { match: ["zone=z1"], set: { team: "search" } };
  const planned = await server.api("/collectors/tags/plan", { method: "POST", token: reader, json: edit });
  expect(planned.status).toBe(200);
  const { matched, changed, plan } = (await planned.json()) as { matched: number; changed: number; plan: PublishPlan };
  expect({ matched, changed, commit: plan.commit, errors: plan.errors, unchanged: plan.unchanged }).toEqual({
    matched: 2,
    changed: 2,
    commit: published,
    errors: [],
    unchanged: 0,
  });
  expect(plan.changes.map((c) => c.collectorId)).toEqual([x.id, y.id].sort());
  expect(plan.changes.every((c) => c.from === null)).toBe(true);
  expect(plan.groups).toHaveLength(1);
  expect(plan.groups[0]!.diff).toMatch(/^\+.*\/var\/log\/search\.log/m);
  // Nothing written.
  expect((await call<{ tags: Record<string, string> }>(`/collectors/${x.id}`)).tags).toEqual({ zone: "z1" });
  expect(await server.app.delivery.target(x.id)).toBeNull();
  expect(await rolloutCount()).toBe(before);
  // One collector's edit has its plan too.
  const one = await call<{ plan: PublishPlan }>(`/collectors/${x.id}/edit-plan`, "POST", { tags: { zone: "z1", team: "search" } });
  expect(one.plan.changes.map((c) => c.collectorId)).toEqual([x.id]);
  expect(one.plan.groups[0]!.diff).toBe(plan.groups[0]!.diff);

  const publisher = await tokenWithScopes(server, ["collectors:read", "collectors:write", "config:publish"], "publisher");
  const res = await server.api("/collectors/tags", { method: "POST", token: publisher, json: edit });
  expect(res.status).toBe(200);
  const { rollout } = (await res.json()) as { rollout: Rollout };
  expect(rollout).toMatchObject({ kind: "attributes", actor: "sa:publisher", commit: published, changed: [x.id, y.id].sort() });
  expect(rollout.strategy).toBeUndefined();
  const listed = (await call<{ items: { id: string; kind: string; changed: number }[] }>("/rollouts?limit=1")).items[0];
  expect(listed).toMatchObject({ id: rollout.id, kind: "attributes", changed: 2 });
  for (const id of [x.id, y.id]) {
    expect((await history(id)).items).toEqual([expect.objectContaining({ seq: 1, commit: published, actor: "sa:publisher", cause: "attributes" })]);
    expect((await server.app.delivery.target(id))!.rendered.body).toContain("/var/log/search.log");
  }
});

test("a staged attribute rollout releases batch by batch with a publish's strategy; a publish and another deploying edit wait for it", async () => {
  await pipeline("/var/log/stage.log", ["stage=on"]);
  const ids: string[] = [];
  for (const name of ["stage-1", "stage-2", "stage-3"]) ids.push((await call<{ id: string }>("/collectors", "POST", { name, tags: { ring: "canary" } })).id);
  const published = (await commitAndPublish("Stage pipeline")).commit;
  for (const id of ids.slice(0, 2)) await applyingAgent(id);
  // The canary holds its new config (applying) until released, so the second batch is seen queued.
  const canary = await applyingAgent(ids[2]!, true);
  const res = await server.api("/collectors/tags", {
    method: "POST",
    json: { match: ["ring=canary"], set: { stage: "on" }, strategy: { batchSize: 2, canary: { collectorIds: [ids[2]!] } } },
  });
  expect(res.status).toBe(200);
  const { rollout } = (await res.json()) as { rollout: Rollout };
  expect(rollout).toMatchObject({ kind: "attributes", phase: "running", batchEnds: [1, 3], changed: [ids[2], ...[ids[0]!, ids[1]!].sort()] });
  // The canary has its target; the others wait, though their tags are written.
  expect((await server.app.delivery.target(ids[2]!))!.rendered.body).toContain("/var/log/stage.log");
  for (const id of ids.slice(0, 2)) {
    expect((await call<{ tags: Record<string, string> }>(`/collectors/${id}`)).tags).toEqual({ ring: "canary", stage: "on" });
    expect(await server.app.delivery.target(id)).toBeNull();
  }
  await until(async () => canary.holding());
  const held = await until(async () => {
    const s = await call<RolloutStatus>(`/rollouts/${rollout.id}`);
    return s.counts.applying === 1 && s;
  });
  expect(held).toMatchObject({ state: "running", counts: { applying: 1, queued: 2 } });

  // Meanwhile a publish, and an edit that would change another config, are refused.
  await pipeline("/var/log/later.log", ["later=yes"]);
  await call("/commit", "POST", { message: "Later pipeline" });
  expect((await server.api("/publish", { method: "POST" })).status).toBe(409);
  const other = await call<{ id: string }>("/collectors", "POST", { name: "stage-other" });
  const blocked = await server.api(`/collectors/${other.id}`, { method: "PATCH", json: { tags: { stage: "on" } } });
  expect({ status: blocked.status, code: ((await blocked.json()) as ErrorBody).error.code }).toEqual({ status: 409, code: "rollout_in_progress" });

  // The canary applies: the next batch goes out, each collector rendered at the commit it is on.
  canary.release();
  const done = await until(async () => {
    const s = await call<RolloutStatus>(`/rollouts/${rollout.id}`);
    return s.state === "completed" && s;
  }, 20_000);
  expect(done.counts).toMatchObject({ current: 3, queued: 0 });
  for (const id of ids) {
    expect((await history(id)).items.at(-1)).toMatchObject({ commit: published, actor: "sa:admin", cause: "attributes" });
  }
});

test("a fleet publish skips a collector whose config cannot be rendered, listing it with the reason on the plan, the rollout and its page", async () => {
  await pipeline("/var/log/gw.log", ["gw=yes"], '{{attr "gateway"}}');
  const good = await call<{ id: string }>("/collectors", "POST", { name: "gw-good", tags: { gw: "yes", gateway: "https://gw-1.example.com" } });
  const bad = await call<{ id: string }>("/collectors", "POST", { name: "gw-bad", tags: { gw: "yes" } });
  await call("/commit", "POST", { message: "Gateway per collector" });

  const plan = await call<PublishPlan>("/publish/plan", "POST", {});
  expect(plan.errors).toEqual([
    { collectorId: bad.id, name: "gw-bad", path: "attributes.gateway", message: expect.stringContaining("has no attribute 'gateway'") },
  ]);
  const res = await server.api("/publish", { method: "POST" });
  expect(res.status).toBe(202);
  const rollout = (await res.json()) as Rollout;
  expect(rollout.changed).toContain(good.id);
  expect(rollout.changed).not.toContain(bad.id);
  expect(rollout.skipped).toEqual(plan.errors);
  expect((await server.app.delivery.target(good.id))!.rendered.body).toContain("gw-1.example.com");
  expect(await server.app.delivery.target(bad.id)).toBeNull();

  const status = await call<RolloutStatus>(`/rollouts/${rollout.id}`);
  expect(status.skipped).toEqual(plan.errors);
  expect((await call<{ items: { id: string; skipped: number }[] }>("/rollouts?limit=1")).items[0]).toMatchObject({ id: rollout.id, skipped: 1 });
  const page = await history(bad.id);
  expect(page.renderFailure).toMatchObject({ commit: rollout.commit, rolloutId: rollout.id, error: expect.stringContaining("has no attribute 'gateway'") });

  // Named, it refuses: the caller asked for that collector.
  const named = await server.api(`/publish/${bad.id}`, { method: "POST" });
  expect({ status: named.status, code: ((await named.json()) as ErrorBody).error.code }).toEqual({ status: 409, code: "render_failed" });

  // Putting a collector into a config it cannot render yet is a deployment too: it would get it once it reports the attribute.
  const writer = await tokenWithScopes(server, ["collectors:read", "collectors:write"]);
  const later = await call<{ id: string }>("/collectors", "POST", { name: "gw-later" });
  expect((await server.api(`/collectors/${later.id}`, { method: "PATCH", token: writer, json: { tags: { gw: "yes" } } })).status).toBe(403);
  expect((await call<{ tags: Record<string, string> }>(`/collectors/${later.id}`)).tags).toEqual({});
  // A collector that could not be rendered before the edit either is not the edit's doing: an unrelated tag needs no more than collectors:write.
  expect((await server.api(`/collectors/${bad.id}`, { method: "PATCH", token: writer, json: { tags: { gw: "yes", owner: "ops" } } })).status).toBe(200);
  // Given its attribute, the edit delivers it, and its page no longer shows the failure.
  await call(`/collectors/${bad.id}`, "PATCH", { tags: { gw: "yes", owner: "ops", gateway: "https://gw-2.example.com" } });
  expect((await server.app.delivery.target(bad.id))!.rendered.body).toContain("gw-2.example.com");
  expect((await history(bad.id)).renderFailure).toBeNull();
});
