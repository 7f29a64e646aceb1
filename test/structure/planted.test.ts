/**
 * Each structure check fails when one bad import is planted: a copy of what
 * the check reads (the modules under server/, agent/ and shared/, the UI's
 * tsconfig, and the assets they import) is
 * taken into a temporary directory, one file is added to it, and the same
 * checkStructure that passes the real tree must name what was planted.
 */
import { afterEach, expect, test } from "bun:test";
import { cpSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { checkStructure, type Report } from "./check.ts";
import { scan, SCANNED } from "./scan.ts";

const ROOT = resolve(import.meta.dir, "../..");
const { assets } = scan(ROOT);
const copies: string[] = [];

afterEach(() => {
  for (const dir of copies.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The report on a fresh copy of the tree with `files` (path → source) added. */
function plantedReport(files: Record<string, string>): Report {
  const copy = mkdtempSync(join(tmpdir(), "svc-structure-"));
  copies.push(copy);
  // Modules and the UI's tsconfig only: test files and test data are not read.
  const read = (src: string) => statSync(src).isDirectory() || (/\.(tsx?|json)$/.test(src) && !/\.test\.tsx?$/.test(src));
  for (const dir of SCANNED) cpSync(join(ROOT, dir), join(copy, dir), { recursive: true, filter: read });
  for (const asset of assets) cpSync(join(ROOT, asset), join(copy, asset));
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(copy, path)), { recursive: true });
    writeFileSync(join(copy, path), source);
  }
  return checkStructure(copy);
}

test("the unplanted copy passes: what fails below fails for what was planted", () => {
  expect(plantedReport({})).toEqual({ unassigned: [], stale: [], wrong: [], cycles: [], computed: [] });
});

test("a domain module importing a collector channel is refused: channels are not the edge, but they are above the domain", () => {
  const report = plantedReport({
    "server/collectors/planted.ts": 'import type { OpampChannel } from "../opamp/channel.ts";\nexport type Planted = OpampChannel;\n',
  });
  expect(report.wrong).toEqual(["server/collectors/planted.ts → server/opamp/channel.ts: domain may not import channels"]);
});

test("the store importing the rollout is refused, and the folder cycle it closes is reported", () => {
  const report = plantedReport({ "server/store/planted.ts": 'import type { Rollouts } from "../rollout/rollout.ts";\nexport type Planted = Rollouts;\n' });
  expect(report.wrong).toEqual(["server/store/planted.ts → server/rollout/rollout.ts: store may not import domain"]);
  expect(report.cycles.some((cycle) => cycle.includes("server/store") && cycle.includes("server/rollout"))).toBe(true);
});

test("a cycle between folders the layers allow is refused all the same", () => {
  const report = plantedReport({
    "server/audit/planted.ts": 'import type { EffectiveConfig } from "../rollout/records.ts";\nexport type Planted = EffectiveConfig;\n',
  });
  expect(report.wrong).toEqual([]);
  expect(report.cycles.some((cycle) => cycle.includes("server/audit") && cycle.includes("server/rollout"))).toBe(true);
});

test("a dynamic import with a computed path is refused: no reader can tell what it loads", () => {
  const report = plantedReport({ "server/collectors/planted.ts": "export const load = (name: string) => import(`./${name}.ts`);\n" });
  expect(report.computed).toEqual(["server/collectors/planted.ts: import(`./${name}.ts`)"]);
});

test("server code importing agent code is refused, and agent code importing the server: they meet only in shared/", () => {
  const report = plantedReport({
    "server/collectors/planted.ts": 'export { DEFAULT_STATE_DIR } from "../../agent/config.ts";\n',
    "agent/planted.ts": 'export { NotFoundError } from "../server/errors.ts";\n',
  });
  expect(report.wrong).toEqual([
    "server/collectors/planted.ts → agent/config.ts: domain may not import agent (the server and the agent meet only in shared/)",
    "agent/planted.ts → server/errors.ts: agent may not import lib (the server and the agent meet only in shared/)",
  ]);
});

test("imports across a layer that the table refuses: the listener importing the endpoints, one channel importing another", () => {
  const report = plantedReport({
    "server/http/planted.ts": 'export { apiRoutes } from "../api/index.ts";\n',
    "server/remotecfg/planted.ts": 'import type { OpampChannel } from "../opamp/channel.ts";\nexport type Planted = OpampChannel;\n',
  });
  expect(report.wrong).toEqual([
    "server/http/planted.ts → server/api/index.ts: the listener is handed its routes, it does not import the endpoints it serves",
    "server/remotecfg/planted.ts → server/opamp/channel.ts: a channel imports only server/channel/, not another channel",
  ]);
});

test("a folder the table does not place fails by its name", () => {
  const report = plantedReport({ "server/newfolder/thing.ts": "export const thing = 1;\n" });
  expect(report.unassigned).toEqual(["server/newfolder"]);
});
