/**
 * POST /publish/plan (issue 23 part 1): what a publish would change, changing
 * nothing. 2,000 collectors in three matcher groups, each group's source
 * changed differently, read as three groups of identical diffs; collectors
 * already on the config are counted unchanged; the plan can be narrowed by
 * collector ids or matchers; it writes no target.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../harness.ts";
import type { PublishPlan } from "../../shared/rollouts.ts";
import { matchedPipeline } from "../deployment.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);
const GROUPS = ["a", "b", "c"] as const;
const FLEET = 2000;

test("a fleet of 2,000 with three distinct changes plans as three groups", async () => {
  const destination = await call<{ id: string }>("/destinations", "POST", {
    name: "backend",
    type: "otlphttp",
    config: { endpoint: "https://otlp.example.com" },
  });
  const sources: Record<string, string> = {};
  for (const group of GROUPS) {
    const source = await call<{ id: string }>("/sources", "POST", {
      name: `logs ${group}`,
      type: "filelog",
      config: { include: [`/var/log/${group}/one.log`] },
    });
    sources[group] = source.id;
    await matchedPipeline(call, `fleet ${group}`, source.id, destination.id, [`group=${group}`]);
  }
  // Collectors are written through the domain (the API would take 2,000 round trips); every one is in a group, half Alloy.
  const ids: string[] = [];
  for (let i = 0; i < FLEET; i++) {
    const collector = await server.app.collectors.create(
      { actor: "sa:test", remoteAddr: null },
      { name: `c-${i}`, managementMode: i % 2 === 0 ? "opamp" : "rcfg-remotecfg", tags: { group: GROUPS[i % 3]! } },
    );
    ids.push(collector.id);
  }
  const outside = await call<{ id: string }>("/collectors", "POST", { name: "outside", tags: { group: "z" } });

  await call("/commit", "POST", { message: "three groups" });
  const first = await call<PublishPlan>("/publish/plan", "POST", {});
  expect(first.errors).toEqual([]);
  expect(first.changes).toHaveLength(FLEET);
  expect(first.changes.some((c) => c.collectorId === outside.id)).toBe(false);
  // Nothing published yet: every change starts from nothing; two runtimes × three groups.
  expect(first.changes.every((c) => c.from === null)).toBe(true);
  expect(first.groups).toHaveLength(6);
  expect(await server.app.delivery.target(ids[0]!)).toBeNull();
  await call("/publish", "POST");

  // Group c changes nothing; a and b change their paths, in two different ways.
  for (const group of ["a", "b"] as const) {
    await call(`/sources/${sources[group]}`, "PUT", { name: `logs ${group}`, type: "filelog", config: { include: [`/var/log/${group}/two.log`] } });
  }
  await call("/commit", "POST", { message: "two paths" });
  const plan = await call<PublishPlan>("/publish/plan", "POST", {});
  const changedGroups = plan.groups.length;
  expect(plan.errors).toEqual([]);
  const inGroups = (wanted: readonly string[]) => ids.filter((_, i) => wanted.includes(GROUPS[i % 3]!));
  expect(plan.changes.map((c) => c.collectorId).sort()).toEqual(inGroups(["a", "b"]).sort());
  expect(plan.unchanged).toBe(inGroups(["c"]).length);
  // a and b, each in both runtimes' syntax.
  expect(changedGroups).toBe(4);
  for (const group of plan.groups) {
    expect(group.diff).toContain("--- current");
    expect(group.diff).toContain("+++ published");
    expect(group.diff).toMatch(/^-.*one\.log/m);
    expect(group.diff).toMatch(/^\+.*two\.log/m);
  }
  const byCollector = new Map(plan.changes.map((c) => [c.collectorId, c]));
  const sample = byCollector.get(ids[0]!)!;
  expect(sample.from?.hash).toBe((await server.app.delivery.target(ids[0]!))!.target.targetHash);
  expect(plan.groups[sample.group]!.collectorIds).toContain(ids[0]!);

  // c changes too; narrowed by matchers to the OpAMP half, the fleet reads as exactly three distinct changes.
  await call(`/sources/${sources.c}`, "PUT", { name: "logs c", type: "filelog", config: { include: ["/var/log/c/three.log"] } });
  await call("/commit", "POST", { message: "three paths" });
  const opamp = await call<PublishPlan>("/publish/plan", "POST", { match: ["collector.mode=opamp"] });
  expect(opamp.groups).toHaveLength(3);
  expect(opamp.groups.map((g) => g.collectorIds.length).reduce((a, b) => a + b, 0)).toBe(FLEET / 2);
  expect(opamp.groups.map((g) => g.diff.match(/^\+.*\/var\/log\/(\w)\//m)![1]).sort()).toEqual(["a", "b", "c"]);

  // Narrowed to ids: unknown ids are 404; both filters at once are 400.
  const two = await call<PublishPlan>("/publish/plan", "POST", { collectorIds: [ids[1]!, ids[0]!] });
  expect(two.changes.map((c) => c.collectorId)).toEqual([ids[0]!, ids[1]!].sort());
  expect((await server.api("/publish/plan", { method: "POST", json: { collectorIds: ["0190c3c0-0000-7000-8000-000000000000"] } })).status).toBe(404);
  const both = await server.api("/publish/plan", { method: "POST", json: { collectorIds: [ids[0]!], match: ["group=a"] } });
  expect(both.status).toBe(400);
  const badMatcher = await server.api("/publish/plan", { method: "POST", json: { match: ["group=~"] } });
  expect(badMatcher.status).toBe(400);
  expect(((await badMatcher.json()) as { error: { details: { path: string }[] } }).error.details[0]!.path).toBe("match[0]");
});

test("the plan's diff holds secrets as markers, never filled in, though the collector's current config has one", async () => {
  const [before, after] = ["Bearer plan-4e1b-current", "Bearer plan-9c7d-next"];
  const destination = await call<{ id: string }>("/destinations", "POST", {
    name: "secret backend",
    type: "otlphttp",
    config: { endpoint: "https://one.example.com", headers: { Authorization: before } },
  });
  const source = await call<{ id: string }>("/sources", "POST", { name: "secret logs", type: "filelog", config: { include: ["/var/log/secret/*.log"] } });
  await matchedPipeline(call, "secret pipeline", source.id, destination.id, ["group=secret"]);
  const collector = await call<{ id: string }>("/collectors", "POST", { name: "holds-a-secret", tags: { group: "secret" } });
  await call("/commit", "POST", { message: "a secret header" });
  await call(`/publish/${collector.id}`, "POST");
  // What the collector is sent has the plaintext: the current config has a secret filled in somewhere.
  const target = (await server.app.delivery.target(collector.id))!;
  expect(await server.app.delivery.delivered(collector.id, target.rendered)).toContain("plan-4e1b-current");

  await call(`/destinations/${destination.id}`, "PUT", {
    name: "secret backend",
    type: "otlphttp",
    config: { endpoint: "https://two.example.com", headers: { Authorization: after } },
  });
  await call("/commit", "POST", { message: "another endpoint and secret" });
  const plan = await call<PublishPlan>("/publish/plan", "POST", { collectorIds: [collector.id] });
  expect(plan.changes.map((c) => c.collectorId)).toEqual([collector.id]);
  expect(plan.groups).toHaveLength(1);
  const diff = plan.groups[0]!.diff;
  expect(diff).toMatch(/^-.*one\.example\.com/m);
  expect(diff).toMatch(/^\+.*two\.example\.com/m);
  expect(diff).toContain("<secret:");
  for (const plaintext of ["plan-4e1b", "plan-9c7d"]) expect(diff).not.toContain(plaintext);
});
