/**
 * One conformance suite per registered catalog type, generated from its
 * folder (folder.ts): its corpus is valid config, its upstream records say
 * where each fact was read, and every render of its corpus (corpus.ts
 * corpusOf) holds against the upstream records on both runtimes
 * (upstream/conform.ts). A type added to the registry is checked here with
 * nothing else to write.
 */
import { describe, expect, test } from "bun:test";
import { alloyDocument } from "../render/alloy.ts";
import { renderOtelcol } from "../render/otelcol.ts";
import { planCollector } from "../render/plan.ts";
import { FOLDERS } from "./registry.ts";
import { alloyProblems, otelcolProblems } from "./upstream/conform.ts";
import { corpusOf } from "./upstream/corpus.ts";
import { upstreamSources } from "./upstream/tables.ts";
import { validateComponentConfig } from "./validate.ts";

for (const folder of FOLDERS) {
  const { kind, type } = folder.type;
  describe(`${kind} ${type}`, () => {
    test("its corpus is valid config", () => {
      for (const config of new Set(Object.values(folder.corpus).flat())) expect(() => validateComponentConfig(kind, type, { ...config })).not.toThrow();
    });

    test("its upstream records name the file and revision each fact was read from", () => {
      for (const s of upstreamSources(folder.upstream)) {
        expect(s.repo).toMatch(/^[\w.-]+\/[\w.-]+$/);
        expect(s.path).toMatch(/\.(go|yaml|md)$/);
        expect(s.ref).toMatch(/^([0-9a-f]{40}|v\d+\.\d+\.\d+)$/);
      }
    });

    test("its corpus renders conform to upstream on both runtimes", () => {
      const problems: string[] = [];
      let otelcol = 0;
      let alloy = 0;
      for (const entry of corpusOf(folder)) {
        problems.push(...otelcolProblems(renderOtelcol(entry.input)).map((p) => `${entry.name} otelcol: ${p}`));
        otelcol++;
        if (entry.alloy === null) continue;
        problems.push(...alloyProblems(alloyDocument(planCollector(entry.alloy, "alloy"), []).blocks).map((p) => `${entry.name} alloy: ${p}`));
        alloy++;
      }
      expect(problems).toEqual([]);
      expect(otelcol).toBeGreaterThan(0);
      // A type Alloy cannot run has no Runtime R render; every other has one.
      expect(alloy > 0).toBe(folder.type.kind === "processor" || folder.type.alloy !== undefined);
    }, 60_000);
  });
}
