/**
 * Onboarding preconditions: every call that mints a token for a snippet or
 * bootstrap files checks the public URL first, so a refused call (409) leaves
 * no enrollment token, no rotated collector token and no audit entry of a
 * mint. System health says which preconditions hold, and how to fix the rest.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, type TestServer } from "../harness.ts";

let server: TestServer;
let downloads: string;
let opampId: string;
let rcfgId: string;

beforeAll(async () => {
  server = await startTestServer();
  downloads = join(server.dir, "downloads");
  mkdirSync(downloads);
  server.app.config.downloads.dir = downloads;
  opampId = (await server.call<{ id: string }>("/collectors", "POST", { name: "edge-o" })).id;
  rcfgId = (await server.call<{ id: string }>("/collectors", "POST", { name: "edge-r", managementMode: "rcfg-remotecfg" })).id;
});
afterAll(() => server.stop());

/** Every route that mints a token for a snippet or bootstrap files. */
const MINTING_CALLS = (): [method: string, path: string][] => [
  ["POST", "/collectors/snippet"],
  ["GET", "/collectors/snippet"],
  ["POST", "/collectors/snippet?agent=true"],
  ["POST", `/collectors/snippet?collectorId=${rcfgId}&agent=true`],
  ["POST", `/collectors/snippet?collectorId=${opampId}`],
  ["POST", "/agents/snippet?maxUses=5"],
  ["POST", `/collectors/${opampId}/bootstrap`],
  ["POST", `/collectors/${rcfgId}/bootstrap`],
  ["POST", "/collectors/bootstrap"],
];

/** What a mint leaves behind: the enrollment tokens and the audit entries of mints and rotations. */
async function mintTraces() {
  const tokens = await server.call<{ items: { id: string }[] }>("/enrollment-tokens");
  const created = await server.call<{ items: { id: string }[] }>("/audit?action=enrollment.create");
  const rotated = await server.call<{ items: { id: string }[] }>("/audit?action=collector.token.rotate");
  return { tokens: tokens.items.map((t) => t.id), audit: [...created.items, ...rotated.items].map((e) => e.id) };
}

describe("a refused onboarding call mints nothing", () => {
  for (const [externalUrl, code] of [
    ["", "external_url_missing"],
    ["http://10.0.0.5:8080", "external_url_insecure"],
  ] as const) {
    test(`externalUrl '${externalUrl}' → 409 ${code}, no token, no audit entry of a mint`, async () => {
      server.app.config.externalUrl = externalUrl;
      const before = await mintTraces();
      for (const [method, path] of MINTING_CALLS()) {
        const res = await server.api(path, { method });
        expect({ path, status: res.status }).toEqual({ path, status: 409 });
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe(code);
      }
      expect(await mintTraces()).toEqual(before);
    });
  }

  test("with a usable externalUrl POST /collectors/bootstrap mints exactly one token, audited, and renders files with it", async () => {
    server.app.config.externalUrl = "https://svc.example.com";
    const before = await mintTraces();
    const res = await server.api("/collectors/bootstrap?environment=edge", { method: "POST" });
    expect(res.status).toBe(201);
    const answer = (await res.json()) as { runtime: string; files: { path: string; body: string }[]; enrollmentTokenId: string };
    expect(answer.runtime).toBe("otelcol");
    expect(answer.files.map((f) => f.path).sort()).toEqual(["/etc/opampsupervisor/config.yaml", "/etc/otel-collector/config.yaml"]);
    expect(answer.files.find((f) => f.path === "/etc/opampsupervisor/config.yaml")!.body).toContain("wss://svc.example.com/v1/opamp");
    const after = await mintTraces();
    expect(after.tokens).toEqual([...before.tokens, answer.enrollmentTokenId]);
    expect(after.audit).toHaveLength(before.audit.length + 1);
    const token = (await server.call<{ items: { id: string; kind: string; environment: string | null }[] }>("/enrollment-tokens")).items.at(-1)!;
    expect(token).toMatchObject({ id: answer.enrollmentTokenId, kind: "opamp", environment: "edge" });
  });
});

describe("GET /system/health onboarding", () => {
  interface Onboarding {
    externalUrlSource: string;
    collectorSnippet: { ready: boolean; problem: string | null };
    agentPackages: { ready: boolean; problem: string | null };
  }
  const onboarding = async () => (await server.call<{ onboarding: Onboarding }>("/system/health")).onboarding;

  test("externalUrl unset or plain http off loopback: the collector snippet is not ready, and the reason says how to fix it", async () => {
    server.app.config.externalUrl = "";
    expect(await onboarding()).toMatchObject({ externalUrlSource: "unset", collectorSnippet: { ready: false } });
    expect((await onboarding()).collectorSnippet.problem).toContain("set externalUrl in config.yaml");
    server.app.config.externalUrl = "http://10.0.0.5:8080";
    expect((await onboarding()).collectorSnippet.problem).toContain("Serve https");
    server.app.config.externalUrl = "https://svc.example.com";
    expect(await onboarding()).toMatchObject({ externalUrlSource: "config", collectorSnippet: { ready: true, problem: null } });
  });

  test("agent packages: not ready without SHA256SUMS or without an svc-agent package it names; ready once one is present", async () => {
    rmSync(join(downloads, "SHA256SUMS"), { force: true });
    let state = await onboarding();
    expect(state.agentPackages.ready).toBe(false);
    expect(state.agentPackages.problem).toContain(`${downloads} (downloads.dir) has no SHA256SUMS`);
    expect(state.agentPackages.problem).toContain("npm run package");
    // Named but absent: still nothing install.sh could fetch.
    writeFileSync(join(downloads, "SHA256SUMS"), `${"a".repeat(64)}  svc-agent_1.0.0_amd64.deb\n`);
    state = await onboarding();
    expect(state.agentPackages.problem).toContain("no svc-agent package named in SHA256SUMS");
    writeFileSync(join(downloads, "svc-agent_1.0.0_amd64.deb"), "deb");
    expect((await onboarding()).agentPackages).toEqual({ ready: true, problem: null });
  });
});
