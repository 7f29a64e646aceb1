import { describe, expect, test } from "bun:test";
import { parse } from "yaml";
import { paths, toYaml } from "./layout.ts";
import { sealPlaintextInTree, sensitiveValuesInTree, type TreeLeaf } from "./secrets-tree.ts";

const destination = {
  id: "d1",
  name: "backend",
  type: "otlphttp",
  config: { endpoint: "https://otlp.example.com", headers: { Authorization: "Bearer one", "X-Scope-OrgID": { value: "tenant", secret: false } } },
};
const source = { id: "s1", name: "logs", type: "filelog", config: { include: ["/var/log/*.log"] } };
const activations = {
  collectorId: "c1",
  sources: [{ sourceId: "s1", configOverrides: { include: ["/var/log/app/*.log"] } }],
  destinations: [{ destinationId: "d1", configOverrides: { headers: { Authorization: "Bearer two" } } }],
};
const files = new Map([
  [paths.destination("d1"), toYaml(destination)],
  [paths.source("s1"), toYaml(source)],
  [paths.activations("c1"), toYaml(activations)],
  ["pipelines/p1.yaml", "id: p1\nname: Authorization\n"],
]);

describe("sensitive values in a config tree", () => {
  test("records and overrides, each with the file and the path inside it", () => {
    expect(sensitiveValuesInTree(files)).toEqual([
      { file: paths.destination("d1"), path: ["config", "headers", "Authorization"], value: "Bearer one" },
      { file: paths.destination("d1"), path: ["config", "headers", "X-Scope-OrgID"], value: { value: "tenant", secret: false } },
      { file: paths.activations("c1"), path: ["destinations", "0", "configOverrides", "headers", "Authorization"], value: "Bearer two" },
    ]);
  });

  test("an override of a record the tree does not hold is not walked (its schema is unknown)", () => {
    expect(sensitiveValuesInTree(new Map([[paths.activations("c1"), toYaml(activations)]]))).toEqual([]);
  });

  test("plaintext is sealed where it stands; other forms and other files are left as they are", () => {
    const seen: TreeLeaf[] = [];
    const out = sealPlaintextInTree(files, (plaintext, where) => {
      seen.push(where);
      return plaintext === "Bearer one" ? "0190e3c4-0000-7000-8000-000000000001" : "0190e3c4-0000-7000-8000-000000000002";
    });
    expect([...out.keys()].sort()).toEqual([paths.activations("c1"), paths.destination("d1")].sort());
    expect(parse(out.get(paths.destination("d1"))!)).toEqual({
      ...destination,
      config: {
        ...destination.config,
        headers: { Authorization: { secret: "0190e3c4-0000-7000-8000-000000000001" }, "X-Scope-OrgID": { value: "tenant", secret: false } },
      },
    });
    expect(parse(out.get(paths.activations("c1"))!).destinations[0].configOverrides).toEqual({
      headers: { Authorization: { secret: "0190e3c4-0000-7000-8000-000000000002" } },
    });
    expect(seen.map((w) => w.file)).toEqual([paths.destination("d1"), paths.activations("c1")]);
    // Sealing again finds nothing.
    expect(sealPlaintextInTree(new Map([...files, ...out]), () => "never")).toEqual(new Map());
  });
});
