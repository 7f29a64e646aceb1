import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../harness.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

interface Collector {
  id: string;
  name: string;
  environment: string | null;
  managementMode: string;
  status: string;
  lastSeen: string | null;
  tags: Record<string, string>;
}

async function create(body: unknown): Promise<Collector> {
  const res = await server.api("/collectors", { method: "POST", json: body });
  expect(res.status).toBe(201);
  return (await res.json()) as Collector;
}

describe("collectors API", () => {
  test("create needs only a name and starts pending with lastSeen null", async () => {
    const collector = await create({ name: "edge-1" });
    expect(collector).toMatchObject({ name: "edge-1", environment: null, managementMode: "opamp", status: "pending", lastSeen: null, tags: {} });
    expect(collector.id).toMatch(/^[0-9a-f-]{36}$/);
    const got = await server.api(`/collectors/${collector.id}`);
    expect(await got.json()).toEqual({
      ...collector,
      attributes: {
        "collector.id": { value: collector.id, origin: "virtual", targets: true },
        "collector.name": { value: "edge-1", origin: "virtual", targets: true },
        "collector.mode": { value: "opamp", origin: "virtual", targets: true },
      },
    });
  });

  test("create takes environment, managementMode and tags", async () => {
    const collector = await create({ name: "r-1", environment: "prod", managementMode: "rcfg-remotecfg", tags: { team: "payments" } });
    expect(collector).toMatchObject({ environment: "prod", managementMode: "rcfg-remotecfg", tags: { team: "payments" } });
  });

  test("bad bodies are 400 with every bad field named", async () => {
    const res = await server.api("/collectors", { method: "POST", json: { name: "", managementMode: "ssh", extra: 1, tags: { team: 5 } } });
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: { code: string; details: { path: string }[] } };
    expect(error.code).toBe("validation_failed");
    const paths = error.details.map((d) => d.path);
    expect(paths).toEqual(expect.arrayContaining(["name", "managementMode", "extra", "tags.team"]));
    const missing = await server.api("/collectors", { method: "POST", json: {} });
    expect(((await missing.json()) as { error: { details: { path: string }[] } }).error.details[0]!.path).toBe("name");
  });

  test("list returns items with the spec's fields and filters by tag, status, environment and text", async () => {
    const fresh = await startTestServer();
    try {
      const make = async (body: unknown) => (await fresh.api("/collectors", { method: "POST", json: body })).json() as Promise<Collector>;
      const a = await make({ name: "alpha", environment: "prod", tags: { team: "payments", tier: "1" } });
      const b = await make({ name: "beta", environment: "staging", tags: { team: "search" } });
      const c = await make({ name: "gamma-payments", tags: {} });
      const list = async (query: string) => {
        const res = await fresh.api(`/collectors${query}`);
        expect(res.status).toBe(200);
        return ((await res.json()) as { items: Collector[] }).items.map((x) => x.name);
      };
      const all = (await (await fresh.api("/collectors")).json()) as { items: Collector[]; nextCursor: string | null };
      expect(all.items.map((x) => x.id)).toEqual([a.id, b.id, c.id]);
      expect(all.nextCursor).toBeNull();
      for (const item of all.items) {
        expect(Object.keys(item)).toEqual(expect.arrayContaining(["id", "name", "status", "lastSeen", "tags", "environment", "managementMode"]));
      }
      expect(await list("?tag=team:payments")).toEqual(["alpha"]);
      expect(await list("?tag=team")).toEqual(["alpha", "beta"]);
      expect(await list("?tag=team:payments&tag=tier:1")).toEqual(["alpha"]);
      expect(await list("?tag=team:payments&tag=tier:2")).toEqual([]);
      expect(await list("?status=pending")).toEqual(["alpha", "beta", "gamma-payments"]);
      expect(await list("?status=online")).toEqual([]);
      expect(await list("?environment=staging")).toEqual(["beta"]);
      expect(await list("?q=PAYMENTS")).toEqual(["gamma-payments"]);
      expect((await fresh.api("/collectors?status=bogus")).status).toBe(400);
      expect((await fresh.api("/collectors?limit=0")).status).toBe(400);
      expect((await fresh.api("/collectors?limit=abc")).status).toBe(400);
      expect((await fresh.api("/collectors?unknown=1")).status).toBe(400);
    } finally {
      await fresh.stop();
    }
  });

  test("cursor pagination walks every collector exactly once, with filters too", async () => {
    const fresh = await startTestServer();
    try {
      const ids: string[] = [];
      for (let i = 0; i < 23; i++) {
        const res = await fresh.api("/collectors", { method: "POST", json: { name: `c${i}`, tags: { parity: i % 2 ? "odd" : "even" } } });
        ids.push(((await res.json()) as Collector).id);
      }
      const walk = async (query: string) => {
        const seen: string[] = [];
        let cursor: string | null = null;
        do {
          const res: Response = await fresh.api(`/collectors?limit=5${query}${cursor ? `&cursor=${cursor}` : ""}`);
          const page = (await res.json()) as { items: Collector[]; nextCursor: string | null };
          expect(page.items.length).toBeLessThanOrEqual(5);
          seen.push(...page.items.map((x) => x.id));
          cursor = page.nextCursor;
        } while (cursor);
        return seen;
      };
      expect(await walk("")).toEqual(ids);
      expect(await walk("&tag=parity:odd")).toEqual(ids.filter((_, i) => i % 2 === 1));
    } finally {
      await fresh.stop();
    }
  });

  test("PATCH changes the given fields only and validates them", async () => {
    const collector = await create({ name: "patch-me", environment: "dev", tags: { a: "1" } });
    const res = await server.api(`/collectors/${collector.id}`, { method: "PATCH", json: { tags: { b: "2" }, environment: null } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ name: "patch-me", environment: null, tags: { b: "2" } });
    expect((await server.api(`/collectors/${collector.id}`, { method: "PATCH", json: {} })).status).toBe(400);
    expect((await server.api(`/collectors/${collector.id}`, { method: "PATCH", json: { managementMode: "x" } })).status).toBe(400);
    expect((await server.api(`/collectors/nope`, { method: "PATCH", json: { name: "x" } })).status).toBe(404);
  });

  test("DELETE removes; a second DELETE and a GET are 404", async () => {
    const collector = await create({ name: "doomed" });
    expect((await server.api(`/collectors/${collector.id}`, { method: "DELETE" })).status).toBe(204);
    const again = await server.api(`/collectors/${collector.id}`, { method: "DELETE" });
    expect(again.status).toBe(404);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe("not_found");
    expect((await server.api(`/collectors/${collector.id}`)).status).toBe(404);
  });

  test("every change is in the audit log with its actor", async () => {
    const collector = await create({ name: "audited" });
    await server.api(`/collectors/${collector.id}`, { method: "PATCH", json: { name: "audited-2" } });
    await server.api(`/collectors/${collector.id}`, { method: "DELETE" });
    const res = await server.api(`/audit?limit=1000`);
    const { items } = (await res.json()) as { items: { action: string; resourceId: string; actor: string; remoteAddr: string }[] };
    const mine = items.filter((e) => e.resourceId === collector.id);
    expect(mine.map((e) => e.action)).toEqual(["collector.delete", "collector.update", "collector.create"]);
    for (const entry of mine) {
      expect(entry.actor).toBe("sa:admin");
      expect(entry.remoteAddr).toBe("127.0.0.1");
    }
  });
});
