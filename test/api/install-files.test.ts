/**
 * What install.sh fetches: /v1/bootstrap renders the file a token is for (and
 * redeems nothing), /downloads/ serves install.sh, the packages and SHA256SUMS
 * from downloads.dir, unauthenticated, and nothing outside it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { REPO } from "../process/spawn.ts";
import { startTestServer, tokenWithScopes, type TestServer } from "../harness.ts";

let server: TestServer;
let dir: string;
let downloads: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "svc-downloads-"));
  downloads = join(dir, "packages");
  mkdirSync(downloads, { recursive: true });
  writeFileSync(join(downloads, "svc-agent_1.2.3_amd64.deb"), "deb bytes");
  writeFileSync(join(dir, "secret.txt"), "outside");
  const sum = new Bun.CryptoHasher("sha256").update("deb bytes").digest("hex");
  writeFileSync(join(downloads, "SHA256SUMS"), `${sum}  svc-agent_1.2.3_amd64.deb\n${"0".repeat(64)}  svc-agent_1.2.3_arm64.deb\n`);
  server = await startTestServer({ SVC_EXTERNALURL: "https://svc.example.com", SVC_DOWNLOADS_DIR: downloads });
});
afterAll(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

const get = (path: string, token?: string) => fetch(server.base + path, token === undefined ? {} : { headers: { Authorization: `Bearer ${token}` } });

async function errorOf(res: Response): Promise<{ status: number; code: string; message: string }> {
  const { error } = (await res.json()) as { error: { code: string; message: string } };
  return { status: res.status, code: error.code, message: error.message };
}

async function mint(json: Record<string, unknown>): Promise<{ id: string; token: string }> {
  return server.call("/enrollment-tokens", "POST", json);
}

describe("/v1/bootstrap", () => {
  test("an agent token renders the agent config in its environment, and stays unredeemed", async () => {
    const { id, token } = await mint({ kind: "agent", environment: "eu-1" });
    const res = await get("/v1/bootstrap?file=/etc/svc/config.yaml", token);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(parse(await res.text())).toMatchObject({ server: { url: "https://svc.example.com", token }, agent: { environment: "eu-1" } });
    const listed = await server.call<{ items: { id: string; uses: number }[] }>("/enrollment-tokens");
    expect(listed.items.find((t) => t.id === id)!.uses).toBe(0);
    // Used up, the token renders nothing.
    await server.app.enrollment.redeemAgent(token);
    expect(await errorOf(await get("/v1/bootstrap?file=/etc/svc/config.yaml", token))).toMatchObject({ status: 401, code: "unauthenticated" });
  });

  test("an opamp token renders the collector and supervisor configs; an rcfg collector token the Runtime R file", async () => {
    const { token } = await mint({ kind: "opamp" });
    const collector = parse(await (await get("/v1/bootstrap?file=/etc/otel-collector/config.yaml", token)).text());
    expect(collector.extensions.opamp.server.ws).toEqual({ endpoint: "wss://svc.example.com/v1/opamp", headers: { Authorization: `Bearer ${token}` } });
    expect((await get("/v1/bootstrap?file=/etc/opampsupervisor/config.yaml", token)).status).toBe(200);
    expect(await errorOf(await get("/v1/bootstrap?file=/etc/svc/config.yaml", token))).toMatchObject({ status: 404, code: "not_found" });

    const { id } = await server.call<{ id: string }>("/collectors", "POST", { name: "rc", managementMode: "rcfg-remotecfg" });
    const { token: own } = await server.call<{ token: string }>(`/collectors/${id}/otlp-token`, "POST");
    const rcfg = await (await get("/v1/bootstrap?file=/etc/rcfg-runtime/config.rcfg", own)).text();
    expect(rcfg).toContain(`id             = "${id}"`);
    expect(rcfg).toContain(`bearer_token   = "${own}"`);
  });

  test("no token, a service-account token or an unknown one is 401; no file named is 400 listing the token's files", async () => {
    expect(await errorOf(await get("/v1/bootstrap?file=/etc/svc/config.yaml"))).toMatchObject({ status: 401, code: "unauthenticated" });
    expect((await get("/v1/bootstrap?file=/etc/svc/config.yaml", server.adminToken)).status).toBe(401);
    expect((await get("/v1/bootstrap?file=/etc/svc/config.yaml", `svcen_${"x".repeat(40)}`)).status).toBe(401);
    const { token } = await mint({ kind: "opamp" });
    const missing = await errorOf(await get("/v1/bootstrap", token));
    expect(missing).toMatchObject({ status: 400, code: "validation_failed" });
    expect(missing.message).toContain("/etc/otel-collector/config.yaml, /etc/opampsupervisor/config.yaml");
  });
});

describe("POST /agents/snippet", () => {
  test("an agent-only one-liner whose token enrolls up to maxUses hosts in the environment; agents:write only", async () => {
    const answer = await server.call<{ snippet: string; enrollmentTokenId: string }>("/agents/snippet?maxUses=20&environment=edge", "POST");
    const match =
      /^curl -fsSL https:\/\/svc\.example\.com\/downloads\/install\.sh \| sudo sh -s -- --endpoint https:\/\/svc\.example\.com --agent-token (svcen_\w+)$/.exec(
        answer.snippet,
      );
    expect(match).not.toBeNull();
    const listed = await server.call<{ items: { id: string; kind: string; maxUses: number; environment: string }[] }>("/enrollment-tokens");
    expect(listed.items.find((t) => t.id === answer.enrollmentTokenId)).toMatchObject({ kind: "agent", maxUses: 20, environment: "edge" });
    expect(await server.app.enrollment.usableForAgent(match![1]!)).toEqual({ environment: "edge" });
    expect((await server.api("/agents/snippet?maxUses=0", { method: "POST" })).status).toBe(400);
    const reader = await tokenWithScopes(server, ["agents:read"]);
    expect((await server.api("/agents/snippet", { method: "POST", token: reader })).status).toBe(403);
  });
});

describe("/downloads/", () => {
  test("install.sh is the repository's, unauthenticated", async () => {
    const res = await get("/downloads/install.sh");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/x-shellscript");
    expect(await res.text()).toBe(readFileSync(join(REPO, "installer/install.sh"), "utf8"));
  });

  test("packages and SHA256SUMS from downloads.dir; the index lists what SHA256SUMS names and is present", async () => {
    const deb = await get("/downloads/svc-agent_1.2.3_amd64.deb");
    expect([deb.status, deb.headers.get("content-type"), await deb.text()]).toEqual([200, "application/vnd.debian.binary-package", "deb bytes"]);
    expect((await (await get("/downloads/SHA256SUMS")).text()).split("\n")).toHaveLength(3);
    const index = (await (await get("/downloads/")).json()) as { items: unknown[] };
    expect(index.items).toEqual([{ name: "svc-agent_1.2.3_amd64.deb", size: 9, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) }]);
  });

  test("a collector package mirror in downloads.dir/collectors is served, and collector snippets point install.sh at it", async () => {
    const mirror = join(downloads, "collectors");
    const snippet = async () => (await server.call<{ snippet: string }>("/collectors/snippet", "POST")).snippet;
    expect(await snippet()).not.toContain("--package-base-url");
    mkdirSync(mirror);
    try {
      writeFileSync(join(mirror, "alloy-1.18.1-1.amd64.deb"), "alloy bytes");
      writeFileSync(join(mirror, "SHA256SUMS"), `${"1".repeat(64)}  alloy-1.18.1-1.amd64.deb\n`);
      const deb = await get("/downloads/collectors/alloy-1.18.1-1.amd64.deb");
      expect([deb.status, deb.headers.get("content-type"), await deb.text()]).toEqual([200, "application/vnd.debian.binary-package", "alloy bytes"]);
      expect(await (await get("/downloads/collectors/SHA256SUMS")).text()).toStartWith("1".repeat(64));
      for (const path of ["/downloads/collectors/..%2FSHA256SUMS", "/downloads/collectors/a/b", "/downloads/collectors/", "/downloads/other/SHA256SUMS"]) {
        expect([path, (await get(path)).status]).toEqual([path, 404]);
      }
      expect(await snippet()).toMatch(/ --token svcen_\w+ --mode opamp --package-base-url https:\/\/svc\.example\.com\/downloads\/collectors$/);
    } finally {
      rmSync(mirror, { recursive: true });
    }
  });

  test("nothing outside downloads.dir: traversal, hidden names and unknown files are 404; writes are 405", async () => {
    for (const path of ["/downloads/..%2Fsecret.txt", "/downloads/%2E%2E/secret.txt", "/downloads/.hidden", "/downloads/none.deb", "/downloads/a/b"]) {
      expect([path, (await get(path)).status]).toEqual([path, 404]);
    }
    expect((await fetch(`${server.base}/downloads/install.sh`, { method: "POST" })).status).toBe(405);
  });
});
