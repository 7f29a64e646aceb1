/**
 * Collector attributes over the real server and real sockets: what an OpAMP
 * agent describes (WebSocket) and what an Alloy-style collector registers and
 * polls with (Connect) is kept on the record, written only when it changed,
 * and shown by GET /collectors/{id} with its origin (tags and environment win
 * over reported ones, virtual ones over both) and whether matchers read it (a
 * reported key only once an admin trusts it). Matchers filter the list,
 * preview a selection and select collectors for bulk tagging (audited); bad
 * matchers are 400s naming the matcher and the column.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { COLLECTORS } from "../../server/collectors/collectors.ts";
import type { Collector } from "../../shared/collectors.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { description, RawAgent, until } from "../opamp/helpers.ts";
import { remoteConfigClient } from "../remotecfg/client.ts";

let server: TestServer;
const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

type Attributes = Record<string, { value: string; origin: string; targets: boolean }>;

/** Sets the admin's list of trusted reported keys (PUT /system/trusted-attributes). */
async function trust(...keys: string[]): Promise<void> {
  await call("/system/trusted-attributes", "PUT", { keys });
}
type Detail = Collector & { attributes: Attributes };

async function version(id: string): Promise<number> {
  return (await server.app.store.get(COLLECTORS, id))!.version;
}

async function ids(query: string): Promise<string[]> {
  return (await call<{ items: { id: string }[] }>(`/collectors?${query}`)).items.map((c) => c.id);
}

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

describe("reported attributes", () => {
  test("an OpAMP agent's identifying and non-identifying attributes are kept; set ones win; an unchanged description writes nothing", async () => {
    const collector = await call<{ id: string }>("/collectors", "POST", { name: "ws-attrs", environment: "prod", tags: { team: "payments" } });
    const token = (await call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp", collectorId: collector.id })).token;
    const wsUrl = `${server.base.replace(/^http/, "ws")}/v1/opamp`;
    const agent = await RawAgent.connect(wsUrl, token);
    try {
      await agent.call({
        agentDescription: description(
          { "service.name": "otelcol-contrib", "service.instance.id": "i-1" },
          { "host.name": "web-1", datacenter: "fra1", team: "reported-team", environment: "staging" },
        ),
      });
      const detail = await until(async () => {
        const got = await call<Detail>(`/collectors/${collector.id}`);
        return got.reported?.datacenter === "fra1" ? got : null;
      });
      expect(detail.reported).toEqual({
        "service.name": "otelcol-contrib",
        "service.instance.id": "i-1",
        "host.name": "web-1",
        datacenter: "fra1",
        team: "reported-team",
        environment: "staging",
      });
      expect(detail.attributes).toMatchObject({
        datacenter: { value: "fra1", origin: "reported", targets: false },
        "host.name": { value: "web-1", origin: "reported", targets: false },
        team: { value: "payments", origin: "set", targets: true },
        environment: { value: "prod", origin: "set", targets: true },
        "collector.id": { value: collector.id, origin: "virtual", targets: true },
        "collector.name": { value: "ws-attrs", origin: "virtual", targets: true },
        "collector.mode": { value: "opamp", origin: "virtual", targets: true },
      });

      // The same description again (a reconnect's full report): no write.
      const before = await version(collector.id);
      await agent.call({
        agentDescription: description(
          { "service.name": "otelcol-contrib", "service.instance.id": "i-1" },
          { "host.name": "web-1", datacenter: "fra1", team: "reported-team", environment: "staging" },
        ),
      });
      await Bun.sleep(100);
      expect(await version(collector.id)).toBe(before);

      // A changed one replaces what was reported.
      await agent.call({ agentDescription: description({ "service.name": "otelcol-contrib" }, { datacenter: "ams2" }) });
      const changed = await until(async () => {
        const got = await call<Detail>(`/collectors/${collector.id}`);
        return got.reported?.datacenter === "ams2" ? got : null;
      });
      expect(changed.reported).toEqual({ "service.name": "otelcol-contrib", datacenter: "ams2" });
      // A matcher reads a reported key once an admin trusts it (before: 400, test/api/trusted-targeting.test.ts).
      await trust("datacenter");
      try {
        expect(await ids('match=datacenter="ams2"')).toEqual([collector.id]);
      } finally {
        await trust();
      }
    } finally {
      agent.close();
    }
  });

  test("an Alloy collector's RegisterCollector and GetConfig attributes are kept (local_attributes over attributes); an unchanged poll writes nothing", async () => {
    const collector = await call<{ id: string }>("/collectors", "POST", { name: "alloy-attrs", managementMode: "rcfg-remotecfg" });
    const token = (await call<{ token: string }>(`/collectors/${collector.id}/otlp-token`, "POST")).token;
    const client = remoteConfigClient(server.base, token);
    // What Alloy sends: its own collector.version and collector.os under the block's attributes (see remotecfg.ts reportedOf).
    await client.registerCollector({
      id: collector.id,
      name: "alloy-attrs",
      attributes: { "collector.version": "v1.5.0", "collector.os": "linux", cluster: "dev", region: "eu", "collector.mode": "spoofed" },
      localAttributes: { cluster: "prod" },
    });
    let detail = await call<Detail>(`/collectors/${collector.id}`);
    expect(detail.reported).toEqual({ "collector.os": "linux", "collector.version": "v1.5.0", cluster: "prod", region: "eu" });
    expect(detail.attributes["collector.os"]).toEqual({ value: "linux", origin: "reported", targets: false });
    expect(detail.attributes.cluster).toEqual({ value: "prod", origin: "reported", targets: false });
    expect(detail.attributes["collector.mode"]).toEqual({ value: "rcfg-remotecfg", origin: "virtual", targets: true });

    // Polls with the same attributes: nothing written (presence coalesces its own).
    const before = await version(collector.id);
    const sameAttributes = { "collector.version": "v1.5.0", "collector.os": "linux", cluster: "dev", region: "eu", "collector.mode": "spoofed" };
    for (let i = 0; i < 3; i++) await client.getConfig({ id: collector.id, attributes: sameAttributes, localAttributes: { cluster: "prod" } });
    // A poll with no attributes keeps what was reported.
    await client.getConfig({ id: collector.id });
    const reportedVersion = (await server.app.store.get<Collector>(COLLECTORS, collector.id))!;
    expect(reportedVersion.data.reported).toEqual({ "collector.os": "linux", "collector.version": "v1.5.0", cluster: "prod", region: "eu" });
    // Presence may have written lastSeen once; the reported map did not change.
    expect(reportedVersion.version - before).toBeLessThanOrEqual(1);

    // A poll with new attributes replaces them.
    await client.getConfig({ id: collector.id, localAttributes: { cluster: "prod", region: "us-east-1" } });
    detail = await call<Detail>(`/collectors/${collector.id}`);
    expect(detail.reported).toEqual({ cluster: "prod", region: "us-east-1" });
    await trust("region");
    try {
      expect(await ids(`match=region=~"us-.*"&match=collector.name=alloy-attrs`)).toEqual([collector.id]);
    } finally {
      await trust();
    }
  });
});

describe("matchers over attributes", () => {
  const fleet: Record<string, string> = {};

  beforeAll(async () => {
    for (const [name, tags] of [
      ["m-prod-us", { env: "prod", region: "us-east-1", team: "a" }],
      ["m-prod-eu", { env: "prod", region: "eu-west-1", team: "b" }],
      ["m-test-us", { env: "test", region: "us-west-2", team: "a" }],
    ] as const) {
      fleet[name] = (await call<{ id: string }>("/collectors", "POST", { name, tags })).id;
    }
  });

  test("GET /collectors?match= filters like the other filters, anchored, repeatable", async () => {
    expect(await ids("match=env%3Dprod&match=team%3Da")).toEqual([fleet["m-prod-us"]!]);
    expect(await ids(`match=${encodeURIComponent('region=~"us-.*"')}&tag=env`)).toEqual([fleet["m-prod-us"]!, fleet["m-test-us"]!]);
    // Fully anchored: "us" alone matches no region.
    expect(await ids(`match=${encodeURIComponent('region=~"us"')}`)).toEqual([]);
    // An absent attribute reads as "": team!=x holds for collectors without a team too, so combine with a name.
    expect(await ids(`match=${encodeURIComponent('collector.name=~"m-.*"')}&match=${encodeURIComponent("team!=a")}`)).toEqual([fleet["m-prod-eu"]!]);
  });

  test("bad matchers are 400 naming each one and its column", async () => {
    const res = await server.api(`/collectors?match=env%3Dprod&match=${encodeURIComponent('region=~"(')}`);
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: { code: string; details: { path: string; message: string }[] } };
    expect(error.code).toBe("validation_failed");
    expect(error.details.map((d) => d.path)).toEqual(["match[1]"]);
    expect(error.details[0]!.message).toMatch(/column \d+/);

    const preview = await server.api("/matchers/preview", { method: "POST", json: { matchers: ["env=prod", "=x", 'a=~"["'] } });
    expect(preview.status).toBe(400);
    const body = (await preview.json()) as { error: { details: { path: string; message: string }[] } };
    expect(body.error.details.map((d) => d.path)).toEqual(["matchers[1]", "matchers[2]"]);
    expect(body.error.details[0]!.message).toContain("column 1");
  });

  test("POST /matchers/preview answers the count and the first page", async () => {
    const answer = await call<{ count: number; items: { id: string }[] }>("/matchers/preview", "POST", { matchers: ['collector.name=~"m-.*"'], limit: 2 });
    expect(answer.count).toBe(3);
    expect(answer.items.map((c) => c.id)).toEqual([fleet["m-prod-us"]!, fleet["m-prod-eu"]!]);
    const prod = await call<{ count: number; items: { id: string }[] }>("/matchers/preview", "POST", { matchers: ["env=prod", 'collector.name=~"m-.*"'] });
    expect(prod.count).toBe(2);
  });

  test("POST /collectors/tags sets and removes tags on the selection, audited; collectors it would not change are not written", async () => {
    const untouched = await version(fleet["m-test-us"]!);
    const result = await call<{ matched: number; changed: number; rollout: unknown }>("/collectors/tags", "POST", {
      match: ["env=prod", 'collector.name=~"m-.*"'],
      set: { tier: "gold" },
      remove: ["team"],
    });
    expect(result).toEqual({ matched: 2, changed: 2, rollout: null });
    const us = await call<Detail>(`/collectors/${fleet["m-prod-us"]}`);
    expect(us.tags).toEqual({ env: "prod", region: "us-east-1", tier: "gold" });
    expect(us.attributes.tier).toEqual({ value: "gold", origin: "set", targets: true });
    expect(await version(fleet["m-test-us"]!)).toBe(untouched);

    const again = await call<{ matched: number; changed: number; rollout: unknown }>("/collectors/tags", "POST", {
      match: ["env=prod", 'collector.name=~"m-.*"'],
      set: { tier: "gold" },
    });
    expect(again).toEqual({ matched: 2, changed: 0, rollout: null });

    const [entry] = await server.app.store.queryAudit({ action: "collector.tags", limit: 10 });
    expect(entry!.details).toMatchObject({ match: ["env=prod", 'collector.name=~"m-.*"'], set: { tier: "gold" }, remove: ["team"] });
    expect([...(entry!.details as { collectorIds: string[] }).collectorIds].sort()).toEqual([fleet["m-prod-us"]!, fleet["m-prod-eu"]!].sort());
    expect(await ids("match=tier%3Dgold")).toEqual([fleet["m-prod-us"]!, fleet["m-prod-eu"]!]);
  });

  test("bulk tagging refuses virtual keys, a key both set and removed, an empty edit and a missing selection", async () => {
    const refused = async (json: unknown) => {
      const res = await server.api("/collectors/tags", { method: "POST", json });
      expect(res.status).toBe(400);
      return ((await res.json()) as { error: { details: { path: string }[] } }).error.details.map((d) => d.path);
    };
    expect(await refused({ match: ["env=prod"], set: { "collector.name": "x" } })).toEqual(["set.collector.name"]);
    expect(await refused({ match: ["env=prod"], set: { a: "1" }, remove: ["a"] })).toEqual(["remove"]);
    expect(await refused({ match: ["env=prod"] })).toEqual(["set"]);
    expect(await refused({ match: [], set: { a: "1" } })).toContain("match");
    expect(await refused({ match: ["env=="], set: { a: "1" } })).toEqual(["match[0]"]);
  });
});
