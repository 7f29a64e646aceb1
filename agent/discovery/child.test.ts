/** discoverInChild runs the real `svc-agent discover` from source and reads its report, or says why it failed. */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { discoverInChild } from "./child.ts";

const dir = mkdtempSync(join(tmpdir(), "svc-agent-child-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("the child's report is the discovery report", async () => {
  const config = join(dir, "ok.yaml");
  writeFileSync(config, `server:\n  url: https://svc.example.com\n  token: svcen_${"a".repeat(40)}\n`);
  const report = await discoverInChild(config);
  expect(Object.keys(report).sort()).toEqual(["collectors", "logSources", "services"]);
  expect(Array.isArray(report.services)).toBe(true);
});

test("a child that fails is an error carrying its message", async () => {
  const config = join(dir, "bad.yaml");
  writeFileSync(config, "server:\n  url: ftp://nowhere\n");
  await expect(discoverInChild(config)).rejects.toThrow(/the discovery run exited 1: svc-agent: invalid config .*server\.url/s);
});
