/**
 * Random browse paths against svc-agent's confinement, on a real temp tree
 * with symlinks and hard links out of the root, a symlink loop, a denied file and a root
 * reached through a link: `..`, `.`, empty and percent-encoded segments, NUL,
 * very long names. Every answer is a listing or sample from inside the root
 * or a BrowseError with a known code; no other exception, and no byte of a
 * file outside the root is ever returned.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { Browser, BrowseError } from "../../agent/browse.ts";

const SECRET = "SECRET-OUTSIDE-THE-ROOT";
/** Every AgentErrorCode but `internal` (an unexpected failure) and `browse_disabled`. */
const CODES = [
  "outside_allowed_roots",
  "denied_by_pattern",
  "not_found",
  "not_a_directory",
  "not_a_file",
  "special_file",
  "hard_link",
  "permission_denied",
  "bad_request",
];

let root: string;
let log: string;
let browser: Browser;

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "svc-fuzz-browse-")));
  log = join(root, "log");
  const outside = join(root, "outside");
  mkdirSync(join(log, "sub"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(log, "app.log"), "inside\n");
  writeFileSync(join(log, "sub", "nested.log"), "nested\n");
  writeFileSync(join(log, "server.key"), SECRET);
  writeFileSync(join(outside, "secret.log"), SECRET);
  symlinkSync(join(outside, "secret.log"), join(log, "to-outside.log"));
  symlinkSync(outside, join(log, "outside-dir"));
  symlinkSync("../../outside/secret.log", join(log, "sub", "relative-escape.log"));
  symlinkSync(join(log, "loop-b"), join(log, "loop-a"));
  symlinkSync(join(log, "loop-a"), join(log, "loop-b"));
  symlinkSync(join(log, "sub"), join(log, "sub", "self"));
  linkSync(join(outside, "secret.log"), join(log, "hard-outside.log"));
  linkSync(join(log, "server.key"), join(log, "sub", "hard-key.log"));
  browser = new Browser({ enabled: true, allowedRoots: [log], denyPatterns: ["*.key"], maxDirEntries: 100, maxSampleLines: 50, maxSampleBytes: 4096 });
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const segment = fc.oneof(
  fc.constantFrom(
    "..",
    ".",
    "",
    "sub",
    "app.log",
    "self",
    "outside-dir",
    "to-outside.log",
    "relative-escape.log",
    "hard-outside.log",
    "hard-key.log",
    "loop-a",
    "server.key",
    "secret.log",
    "outside",
  ),
  fc.constantFrom("%2e%2e", "..%2f..", "%2F", "..\\..", "\u0000", "a\u0000b", "..\u0000", "\u2025", "\uff0e\uff0e", " ", "~"),
  fc.nat({ max: 2 }).map((k) => "n".repeat([255, 256, 5_000][k]!)),
  fc.string({ maxLength: 8 }),
);
const path = fc.tuple(fc.constantFrom("log", "root", "/", "", "//"), fc.array(segment, { maxLength: 8 })).map(([start, segments]) => {
  const base = start === "log" ? log : start === "root" ? root : start;
  return [base, ...segments].join("/");
});

async function answer(request: Promise<unknown>, path: string): Promise<void> {
  try {
    const result = await request;
    const text = JSON.stringify(result);
    if (text.includes(SECRET) || text.includes("secret.log"))
      throw new Error(`${JSON.stringify(path)} leaked what lies outside the root: ${text.slice(0, 300)}`);
  } catch (error) {
    if (!(error instanceof BrowseError)) throw new Error(`${JSON.stringify(path.slice(0, 200))} threw ${String(error)}`);
    expect(CODES).toContain(error.code);
    expect(error.message.length).toBeGreaterThan(0);
  }
}

test("random paths: a result from inside the root or a BrowseError with a known code", async () => {
  await fc.assert(
    fc.asyncProperty(path, async (p) => {
      await answer(browser.list(p), p);
      await answer(browser.sample(p, "bytes", "head"), p);
      await answer(browser.sample(p, "lines", "tail"), p);
    }),
    { numRuns: 300 },
  );
}, 30_000);

test("the escapes and the loop, named: each refused with its code", async () => {
  const code = async (request: Promise<unknown>) =>
    request.then(
      () => "ok",
      (e: unknown) => (e instanceof BrowseError ? e.code : String(e)),
    );
  expect(await code(browser.sample(join(log, "sub", "relative-escape.log"), "bytes", "head"))).toBe("outside_allowed_roots");
  expect(await code(browser.sample(`${log}/sub/self/self/self/../../../../../outside/secret.log`, "bytes", "head"))).toBe("outside_allowed_roots");
  expect(await code(browser.list(join(log, "loop-a")))).not.toBe("ok");
  expect(await code(browser.sample(join(log, "hard-outside.log"), "bytes", "head"))).toBe("hard_link");
  expect(await code(browser.sample(join(log, "sub", "hard-key.log"), "lines", "tail"))).toBe("hard_link");
  expect(await code(browser.sample(`${log}/app.log\u0000`, "bytes", "head"))).toBe("bad_request");
  expect(await code(browser.list(`${log}/${"n".repeat(5_000)}`))).toBe("bad_request");
});
