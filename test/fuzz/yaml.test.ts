/**
 * Hostile YAML for both config loaders (the server's config.yaml and
 * svc-agent's): alias bombs of several shapes, huge and deeply nested
 * documents, random text and well-formed files with values of the wrong
 * type. Each is a typed error listing problems under a key, `(yaml)` or
 * `(root)`, with a message naming the limit or the key; never a hang,
 * never another exception.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { stringify } from "yaml";
import { AgentConfigError, parseAgentConfig } from "../../agent/config.ts";
import { ConfigError, loadConfig } from "../../server/config/load.ts";

const dir = mkdtempSync(join(tmpdir(), "svc-fuzz-yaml-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Outcome = "ok" | { key: string; message: string }[];

function server(text: string): Outcome {
  const path = join(dir, "config.yaml");
  writeFileSync(path, text);
  try {
    loadConfig({ path, env: {} });
    return "ok";
  } catch (error) {
    if (!(error instanceof ConfigError)) throw new Error(`the server loader threw ${String(error)} for ${JSON.stringify(text.slice(0, 200))}`);
    return error.problems.map((p) => ({ key: p.key, message: p.message }));
  }
}

function agent(text: string): Outcome {
  try {
    parseAgentConfig(text);
    return "ok";
  } catch (error) {
    if (!(error instanceof AgentConfigError)) throw new Error(`the agent loader threw ${String(error)} for ${JSON.stringify(text.slice(0, 200))}`);
    return error.problems.map((p) => ({ key: p.key, message: p.message }));
  }
}

/** Fails unless the outcome is a refusal whose first problem is under `key` and mentions `words`. */
function refused(outcome: Outcome, key: string, words: RegExp): void {
  expect(outcome).not.toBe("ok");
  const problems = outcome as Exclude<Outcome, "ok">;
  expect(problems.some((p) => p.key === key && words.test(p.message))).toBe(true);
}

/** Every level doubles the one before: 2^levels leaves from a file of a few hundred bytes. */
function bomb(levels: number, flow: boolean): string {
  const lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let i = 1; i <= levels; i++) {
    const refs = Array.from({ length: 9 }, () => `*a${i - 1}`);
    lines.push(flow ? `a${i}: &a${i} [${refs.join(",")}]` : `a${i}: &a${i}\n${refs.map((r) => `  - ${r}`).join("\n")}`);
  }
  return lines.join("\n") + "\n";
}

test("alias bombs, flow and block, are refused by both loaders naming the alias limit", () => {
  for (const flow of [true, false]) {
    refused(server(bomb(9, flow)), "(yaml)", /alias/i);
    refused(agent(bomb(9, flow)), "(yaml)", /alias/i);
  }
  // A single alias referenced from a map merge key over and over.
  const merge = "base: &b {x: 1}\n" + Array.from({ length: 500 }, (_, i) => `k${i}: {<<: *b}`).join("\n");
  refused(agent(merge), "(yaml)", /alias/i);
  refused(server(merge), "(yaml)", /alias/i);
});

test("a huge document is refused naming the size limit, before it is parsed", () => {
  const huge = "# padding\n".repeat(300_000) + "logging:\n  level: info\n";
  refused(agent(huge), "(yaml)", /larger than \d+ bytes/);
  refused(server(huge), "--config", /larger than \d+ bytes/);
});

test("nesting 10,000 deep, flow and block, is a clear problem, not a stack overflow", () => {
  const flow = `logging: ${"[".repeat(10_000)}${"]".repeat(10_000)}\n`;
  const block = Array.from({ length: 2_000 }, (_, i) => `${" ".repeat(i)}k${i}:`).join("\n") + " x\n";
  for (const text of [flow, block]) {
    expect(server(text)).not.toBe("ok");
    expect(agent(text)).not.toBe("ok");
  }
});

/** Keys the two loaders know, with values of any type. */
const serverKeys = ["listen", "logging", "storage", "http", "opamp", "rateLimit", "tls", "externalUrl", "bootstrap"];
const agentKeys = ["server", "browse", "collectors", "identity", "log", "fingerprints"];
const anyValue = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.string({ unit: "grapheme", maxLength: 30 }),
  fc.constantFrom(-1, 0, 1e308, "\u0000", "~", "yes", "0x1F", ".inf"),
);

test("well-formed files with values of the wrong type: each problem is a sentence under a key", () => {
  for (const [load, keys] of [
    [server, serverKeys],
    [agent, agentKeys],
  ] as const) {
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.oneof(fc.constantFrom(...keys), fc.string({ maxLength: 10 })),
          fc.oneof(anyValue, fc.dictionary(fc.constantFrom(...keys, "level", "port", "url", "maxDirEntries"), anyValue)),
        ),
        (doc) => {
          const outcome = load(stringify(doc));
          // An empty YAML key is reported under the key "" ("unknown key"), so only the message must be there.
          if (outcome !== "ok") for (const p of outcome) expect(typeof p.key === "string" && p.message.length > 0).toBe(true);
        },
      ),
      { numRuns: 150 },
    );
  }
});

test("random text: a typed error or a config, nothing else", () => {
  const text = fc.oneof(
    fc.string({ maxLength: 200 }),
    fc.string({ unit: "binary", maxLength: 200 }),
    fc
      .array(
        fc.constantFrom(
          "&a ",
          "*a",
          "<<: ",
          "- ",
          ": ",
          "{",
          "}",
          "[",
          "]",
          "!!binary ",
          "!!js/function ",
          "%YAML 1.2\n",
          "---\n",
          "...\n",
          "? ",
          "|\n",
          ">-\n",
          "\t",
          "\n  ",
          "\u0000",
          "\ufeff",
          "'",
          '"',
          "#",
        ),
        { maxLength: 40 },
      )
      .map((parts) => parts.join("")),
  );
  fc.assert(
    fc.property(text, (t) => {
      server(t);
      agent(t);
    }),
    { numRuns: 300 },
  );
});
