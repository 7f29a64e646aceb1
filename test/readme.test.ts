/** README's configuration table must name every key and every variable the server reads. */
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
