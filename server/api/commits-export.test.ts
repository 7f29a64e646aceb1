/**
 * GET /commits/export: the whole history as a git bundle that real git
 * clones, on both history backends (a bare repository on disk in embedded
 * mode, the database in external mode). Before the first commit it is 409
 * no_history; each export is audited. Each commit's own diff names the
 * files git says it changed, on both backends.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { tokenWithScopes, startTestServer, type TestServer } from "../../test/harness.ts";
import { PostgresStore } from "../store/postgres.ts";
import { type TestDatabases, testDatabases } from "../store/testdb.ts";

let pg: TestDatabases;
beforeAll(async () => {
  pg = await testDatabases();
});
afterAll(() => pg?.dropAll());

async function run(cwd: string, ...cmd: string[]): Promise<string> {
  const proc = Bun.spawn(cmd, { cwd, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`${cmd.join(" ")}: ${err}`);
  return out;
}

const backends: [string, () => Promise<TestServer>][] = [
  ["embedded (disk)", () => startTestServer()],
  ["external (PostgreSQL)", async () => startTestServer({}, async () => PostgresStore.open(await pg.create("export")))],
];

describe.each(backends)("GET /commits/export on %s", (name, start) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await start();
  });
  afterAll(() => server?.stop());

  test("the bundle clones with real git to the API's history", async () => {
    const empty = await server.api("/commits/export");
    expect(empty.status).toBe(409);
    expect(((await empty.json()) as { error: { code: string } }).error.code).toBe("no_history");

    const config = server.app.configStore;
    await config.edit(
      [
        { path: "sources/a.yaml", text: "id: a\nname: A\n" },
        { path: "pipelines/p.yaml", text: "id: p\n" },
      ],
      [],
    );
    await server.call("/commit", "POST", { message: "first" });
    await config.edit(
      [
        { path: "sources/a.yaml", text: "id: a\nname: Renamed\n" },
        { path: "pipelines/p.yaml", text: null },
      ],
      [],
    );
    await server.call("/commit", "POST", { message: "second" });
    const { items } = await server.call<{ items: { commit: string }[] }>("/commits");
    expect(items).toHaveLength(2);
    const head = items[0]!.commit;

    const res = await server.api("/commits/export");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-git-bundle");
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="svc-config-${head.slice(0, 7)}.bundle"`);
    const bundle = join(server.dir, "history.bundle");
    await Bun.write(bundle, await res.arrayBuffer());

    const clone = join(server.dir, "clone");
    await run(server.dir, "git", "clone", "--quiet", bundle, clone);
    expect((await run(clone, "git", "log", "--format=%H")).trim().split("\n")).toEqual(items.map((c) => c.commit));
    expect(await Bun.file(join(clone, "sources/a.yaml")).text()).toBe("id: a\nname: Renamed\n");
    expect(existsSync(join(clone, "pipelines/p.yaml"))).toBe(false);
    expect(await run(clone, "git", "show", `${items[1]!.commit}:pipelines/p.yaml`)).toBe("id: p\n");
    expect(await run(clone, "git", "bundle", "verify", "--quiet", bundle)).toBe("");
    expect(await run(clone, "git", "fsck", "--strict")).toBe("");

    const [audit] = await server.app.store.queryAudit({ action: "config.export", limit: 10 });
    expect(audit).toMatchObject({ resource: "commit", resourceId: head, outcome: "success" });
    // External mode keeps no repository on the replica's disk.
    expect(existsSync(join(server.dir, "config.git"))).toBe(name.startsWith("embedded"));
  });

  test("GET /commits/{commit} answers the files git says the commit changed, with their diff; 404 for an unknown one", async () => {
    const { items } = await server.call<{ items: { commit: string }[] }>("/commits");
    const [head, first] = [items[0]!.commit, items[1]!.commit];
    const diff = await server.call<{ parent: string | null; items: { path: string; change: string; record?: { name: string | null } }[]; diff: string }>(
      `/commits/${head}`,
    );
    expect(diff.parent).toBe(first);
    const clone = join(server.dir, "clone");
    const git = (await run(clone, "git", "diff", "--name-status", first, head)).trim().split("\n");
    const letter = { added: "A", modified: "M", deleted: "D" } as Record<string, string>;
    expect(diff.items.map((i) => `${letter[i.change]}\t${i.path}`)).toEqual(git);
    expect(diff.items.map((i) => i.record?.name)).toEqual([null, "Renamed"]); // the pipeline file held no name
    expect(diff.diff).toContain("-name: A\n+name: Renamed");
    expect((await server.call<{ items: unknown[] }>(`/commits/${first}`)).items).toHaveLength(2);
    expect((await server.api(`/commits/${"f".repeat(40)}`)).status).toBe(404);
  });

  test("the OpenAPI document describes the bundle answer", async () => {
    const doc = (await (await fetch(`${server.base}/api/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, unknown> }> }>>;
    };
    expect(Object.keys(doc.paths["/commits/export"]!.get!.responses["200"]!.content)).toEqual(["application/x-git-bundle"]);
  });

  test("needs config:read", async () => {
    const token = await tokenWithScopes(server, ["collectors:read"]);
    expect((await server.api("/commits/export", { token })).status).toBe(403);
    const reader = await tokenWithScopes(server, ["config:read"]);
    expect((await server.api("/commits/export", { token: reader })).status).toBe(200);
  });
});
