/**
 * README's configuration table must name every key and every variable the
 * server reads; its test command is CI's; the Node.js version it asks for is
 * package.json's engines and what the packages Node.js runs declare.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { envName, KEYS, type KeySpec } from "../server/config/keys.ts";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");

test("every configuration key and its environment variables are documented", () => {
  for (const [key, spec] of Object.entries(KEYS) as [string, KeySpec][]) {
    expect(readme).toContain(`| \`${key}\` |`);
    for (const name of [envName(key), ...(spec.aliases ?? [])]) expect(readme).toContain(`\`${name}\``);
  }
});

test(".ci/run runs exactly the README test command", () => {
  const command = /## Tests\s+```sh\n(.+)\n```/.exec(readme)![1]!;
  const ci = readFileSync(new URL("../.ci/run", import.meta.url), "utf8");
  expect(ci.trim().split("\n").at(-1)).toBe(command);
});

/** The oldest version a package's engines.node range admits, as [major, minor, patch]; "^18.19.0 || >=20.6.0" → 18.19.0. */
function oldestAdmitted(range: string): number[] {
  const floors = range.split("||").map((alternative) => {
    const m = /^\s*(?:>=|\^|~)?\s*v?(\d+)(?:\.(\d+|x))?(?:\.(\d+|x))?/.exec(alternative);
    if (!m) throw new Error(`an engines.node range this test does not read: ${range}`);
    return [m[1], m[2], m[3]].map((part) => (part === undefined || part === "x" ? 0 : Number(part)));
  });
  return floors.sort(compareVersions)[0]!;
}

function compareVersions(a: number[], b: number[]): number {
  return a[0]! - b[0]! || a[1]! - b[1]! || a[2]! - b[2]!;
}

/**
 * Development packages Node.js itself runs in the two README commands: the
 * TypeScript compiler (`npm test` type-checks with it) and Biome's launcher
 * (`npm test` lints with it). Every other dev package (the test tools, the
 * OpenTelemetry JS exporters) runs under Bun, whatever Node version its engines
 * field names.
 */
const RUN_BY_NODE = new Set(["node_modules/typescript", "node_modules/@biomejs/biome"]);

test("README and package.json ask for the Node.js that what Node runs needs", () => {
  const lock = JSON.parse(readFileSync(new URL("../package-lock.json", import.meta.url), "utf8")) as {
    packages: Record<string, { engines?: { node?: string } | string[]; dev?: boolean }>;
  };
  let needed = [0, 0, 0];
  let neededBy = "";
  for (const [path, pkg] of Object.entries(lock.packages)) {
    const range = Array.isArray(pkg.engines) ? undefined : pkg.engines?.node;
    if (path === "" || range === undefined || (pkg.dev === true && !RUN_BY_NODE.has(path))) continue;
    const oldest = oldestAdmitted(range);
    if (compareVersions(oldest, needed) > 0) [needed, neededBy] = [oldest, path];
  }
  const minimum = needed.join(".");
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { engines: { node: string } };
  expect(`${neededBy}: ${pkg.engines.node}`).toBe(`${neededBy}: >=${minimum}`);
  expect(readme).toContain(`Node.js ${needed[0]}.${needed[1]} or newer`);
});
