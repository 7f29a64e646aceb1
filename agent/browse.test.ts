import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rerunUnprivileged, RERUN_TIMEOUT_MS } from "../test/unprivileged.ts";
import { Browser, BrowseError, DISABLED_MESSAGE, MAX_PATH_LENGTH } from "./browse.ts";
import { ALWAYS_DENIED } from "../shared/deny.ts";
import type { BrowseConfig } from "./types.ts";
import type { AgentErrorCode } from "../shared/agent-protocol.ts";

/** Deny patterns as an agent config carries them: the usual built-in ones. */
const DENY = ["*.key", "*.pem", "id_rsa*", "*shadow*", ".ssh", "/proc/*", "/sys/*", "/etc/shadow"];

let root: string; // realpath'd temp dir
let log: string; // the allowed root
let outside: string;

function browser(overrides: Partial<BrowseConfig> = {}): Browser {
  return new Browser({
    enabled: true,
    allowedRoots: [log],
    denyPatterns: DENY,
    maxDirEntries: 1000,
    maxSampleLines: 200,
    maxSampleBytes: 262144,
    ...overrides,
  });
}

async function refusal(promise: Promise<unknown>, code: AgentErrorCode): Promise<BrowseError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BrowseError);
  expect((error as BrowseError).code).toBe(code);
  return error as BrowseError;
}

const bigLine = (i: number) => `line ${String(i).padStart(7, "0")} ${"x".repeat(40)}\n`;
const BIG_LINES = 100_000; // 54 bytes each: about 5 MiB

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "svc-browse-")));
  log = join(root, "log");
  outside = join(root, "outside");
  mkdirSync(join(log, "sub"), { recursive: true });
  mkdirSync(join(log, ".ssh"));
  mkdirSync(join(root, "logs"));
  mkdirSync(outside);
  writeFileSync(join(log, "app.log"), "one\ntwo\nthree\n");
  writeFileSync(join(log, "no-newline.log"), "a\nb");
  writeFileSync(join(log, "empty.log"), "");
  writeFileSync(join(log, "fixed.log"), Array.from({ length: 10 }, (_, i) => `${String(i).repeat(29)}\n`).join(""));
  writeFileSync(join(log, "big.log"), Array.from({ length: BIG_LINES }, (_, i) => bigLine(i + 1)).join(""));
  writeFileSync(join(log, "accents.log"), "é".repeat(100));
  writeFileSync(join(log, "latin1.log"), Buffer.from("caf\xe9 au lait is served hot\n".repeat(20), "latin1"));
  writeFileSync(join(log, "nul.bin"), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x00, 0x00, 0x41]));
  writeFileSync(join(log, "noise.bin"), Buffer.from(Array.from({ length: 4096 }, (_, i) => 0x80 + (i % 0x7f))));
  writeFileSync(join(log, "server.key"), "secret");
  writeFileSync(join(log, "SERVER.KEY"), "secret");
  writeFileSync(join(log, "id_rsa"), "secret");
  writeFileSync(join(log, ".ssh", "authorized_keys"), "secret");
  writeFileSync(join(log, "sub", "nested.log"), "nested\n");
  writeFileSync(join(outside, "secret.log"), "outside\n");
  writeFileSync(join(outside, "shadow"), "root:x:\n");
  writeFileSync(join(root, "logs", "app.log"), "sibling\n");
  symlinkSync(join(log, "server.key"), join(log, "to-key.log"));
  symlinkSync(join(outside, "secret.log"), join(log, "to-outside.log"));
  symlinkSync(join(outside, "shadow"), join(log, "innocent.log"));
  symlinkSync(outside, join(log, "outside-dir"));
  symlinkSync(join(log, ".ssh"), join(log, "keys"));
  symlinkSync("app.log", join(log, "relative.log"));
  symlinkSync(join(log, "loop-b"), join(log, "loop-a"));
  symlinkSync(join(log, "loop-a"), join(log, "loop-b"));
  symlinkSync(log, join(root, "log-link"));
  // Hard links carry no trace of the name they share: only the link count tells.
  linkSync(join(outside, "secret.log"), join(log, "hard-outside.log"));
  linkSync(join(log, "SERVER.KEY"), join(log, "hard-key.log"));
  // A directory reached through a symlink whose real path holds a denied entry.
  mkdirSync(join(root, "data", "private"), { recursive: true });
  writeFileSync(join(root, "data", "public.log"), "public\n");
  writeFileSync(join(root, "data", "private", "token.log"), "secret\n");
  symlinkSync(join(root, "data"), join(root, "view"));
  expect(spawnSync("mkfifo", [join(log, "pipe")]).status).toBe(0);
  mkdirSync(join(log, "many"));
  for (let i = 0; i < 5000; i++) writeFileSync(join(log, "many", `f${String(i).padStart(4, "0")}.log`), "");
  writeFileSync(join(log, "many", "a.key"), "");
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("sampling", () => {
  test("a small file in both modes and directions is returned whole", async () => {
    const b = browser();
    for (const mode of ["lines", "bytes"] as const) {
      for (const from of ["head", "tail"] as const) {
        const s = await b.sample(join(log, "app.log"), mode, from);
        expect(s).toEqual({
          path: join(log, "app.log"),
          mode,
          from,
          size: 14,
          binary: false,
          content: "one\ntwo\nthree\n",
          lines: mode === "lines" ? 3 : 0,
          truncated: false,
        });
      }
    }
  });

  test("bytes mode stops at maxSampleBytes from either end", async () => {
    const b = browser({ maxSampleBytes: 5 });
    expect(await b.sample(join(log, "app.log"), "bytes", "head")).toMatchObject({ content: "one\nt", truncated: true, size: 14 });
    expect(await b.sample(join(log, "app.log"), "bytes", "tail")).toMatchObject({ content: "hree\n", truncated: true, size: 14 });
  });

  test("lines mode stops at maxSampleLines from either end", async () => {
    const b = browser({ maxSampleLines: 2 });
    expect(await b.sample(join(log, "app.log"), "lines", "head")).toMatchObject({ content: "one\ntwo\n", lines: 2, truncated: true });
    expect(await b.sample(join(log, "app.log"), "lines", "tail")).toMatchObject({ content: "two\nthree\n", lines: 2, truncated: true });
  });

  test("a last line without a newline counts as a line", async () => {
    const b = browser();
    expect(await b.sample(join(log, "no-newline.log"), "lines", "head")).toMatchObject({ content: "a\nb", lines: 2, truncated: false });
    expect(await b.sample(join(log, "no-newline.log"), "lines", "tail")).toMatchObject({ content: "a\nb", lines: 2, truncated: false });
    expect(await browser({ maxSampleLines: 1 }).sample(join(log, "no-newline.log"), "lines", "tail")).toMatchObject({
      content: "b",
      lines: 1,
      truncated: true,
    });
  });

  test("the tail of a 5 MiB file in lines mode is exactly its last 200 lines", async () => {
    const s = await browser().sample(join(log, "big.log"), "lines", "tail");
    const expected = Array.from({ length: 200 }, (_, i) => bigLine(BIG_LINES - 199 + i)).join("");
    expect(s).toMatchObject({ lines: 200, truncated: true, binary: false, size: BIG_LINES * 54 });
    expect(s.content).toBe(expected);
  });

  test("the head of a 5 MiB file in lines mode is exactly its first 200 lines", async () => {
    const s = await browser().sample(join(log, "big.log"), "lines", "head");
    expect(s.content).toBe(Array.from({ length: 200 }, (_, i) => bigLine(i + 1)).join(""));
    expect(s).toMatchObject({ lines: 200, truncated: true });
  });

  test("bytes mode on a 5 MiB file returns maxSampleBytes from the right end", async () => {
    const b = browser();
    const tail = await b.sample(join(log, "big.log"), "bytes", "tail");
    expect(tail.content.length).toBe(262144);
    expect(tail.content.endsWith(bigLine(BIG_LINES))).toBe(true);
    const head = await b.sample(join(log, "big.log"), "bytes", "head");
    expect(head.content.length).toBe(262144);
    expect(head.content.startsWith(bigLine(1))).toBe(true);
  });

  test("lines mode reads no more than maxSampleBytes and returns whole lines only", async () => {
    // fixed.log: lines 0–9 of 30 bytes each. A 90-byte tail window holds lines 7–9 exactly;
    // its look-behind byte is line 6's newline, so line 7 is known to be whole.
    const path = join(log, "fixed.log");
    const line = (i: number) => `${String(i).repeat(29)}\n`;
    expect(await browser({ maxSampleBytes: 90 }).sample(path, "lines", "tail")).toMatchObject({
      content: line(7) + line(8) + line(9),
      lines: 3,
      truncated: true,
    });
    // With 89 bytes line 7 is cut: it is dropped.
    expect(await browser({ maxSampleBytes: 89 }).sample(path, "lines", "tail")).toMatchObject({ content: line(8) + line(9), lines: 2, truncated: true });
    expect(await browser({ maxSampleBytes: 100 }).sample(path, "lines", "head")).toMatchObject({
      content: line(0) + line(1) + line(2),
      lines: 3,
      truncated: true,
    });
    // A line longer than the window yields nothing rather than a fragment.
    expect(await browser({ maxSampleBytes: 20 }).sample(path, "lines", "tail")).toMatchObject({ content: "", lines: 0, truncated: true });
  });

  test("a byte window never starts or ends inside a UTF-8 character", async () => {
    const b = browser({ maxSampleBytes: 51 });
    const tail = await b.sample(join(log, "accents.log"), "bytes", "tail");
    const head = await b.sample(join(log, "accents.log"), "bytes", "head");
    expect(tail).toMatchObject({ content: "é".repeat(25), binary: false, truncated: true });
    expect(head).toMatchObject({ content: "é".repeat(25), binary: false, truncated: true });
  });

  test("an empty file works in every mode", async () => {
    const b = browser();
    for (const mode of ["lines", "bytes"] as const) {
      for (const from of ["head", "tail"] as const) {
        expect(await b.sample(join(log, "empty.log"), mode, from)).toMatchObject({ size: 0, content: "", lines: 0, binary: false, truncated: false });
      }
    }
  });

  test("binary files are flagged and their content withheld", async () => {
    const b = browser();
    for (const name of ["nul.bin", "noise.bin"]) {
      for (const mode of ["lines", "bytes"] as const) {
        expect(await b.sample(join(log, name), mode, "head")).toMatchObject({ binary: true, content: "", lines: 0 });
      }
    }
  });

  test("a binary file is flagged even when the line window holds no whole line", async () => {
    expect(await browser({ maxSampleBytes: 4 }).sample(join(log, "nul.bin"), "lines", "tail")).toMatchObject({
      binary: true,
      content: "",
      lines: 0,
      truncated: true,
    });
  });

  test("a few invalid bytes (Latin-1 text) do not make a file binary", async () => {
    const s = await browser().sample(join(log, "latin1.log"), "lines", "tail");
    expect(s).toMatchObject({ binary: false, lines: 20 });
    expect(s.content).toContain("au lait");
  });

  test("a symlink within the roots to an allowed file is followed", async () => {
    expect(await browser().sample(join(log, "relative.log"), "lines", "head")).toMatchObject({ path: join(log, "relative.log"), content: "one\ntwo\nthree\n" });
  });

  test("directories are refused with not_a_file, missing files with not_found", async () => {
    await refusal(browser().sample(join(log, "sub"), "lines", "tail"), "not_a_file");
    await refusal(browser().sample(join(log, "nope.log"), "lines", "tail"), "not_found");
    await refusal(browser().sample(join(log, "app.log", "x"), "lines", "tail"), "not_found");
  });

  test("a fifo is refused with special_file without being opened", async () => {
    const e = await refusal(browser().sample(join(log, "pipe"), "lines", "tail"), "special_file");
    expect(e.message).toContain("fifo");
  }, 2000);

  test("a character device is refused with special_file", async () => {
    await refusal(browser({ allowedRoots: ["/"] }).sample("/dev/null", "bytes", "head"), "special_file");
  }, 2000);

  test("a symlink loop is a clear error, not a hang", async () => {
    const e = await refusal(browser().sample(join(log, "loop-a"), "lines", "tail"), "not_found");
    expect(e.message).toContain("symbolic links");
    await refusal(browser().list(join(log, "loop-a")), "not_found");
  }, 2000);

  test("bad modes are refused", async () => {
    await refusal(browser().sample(join(log, "app.log"), "words" as "lines", "tail"), "bad_request");
    await refusal(browser().sample(join(log, "app.log"), "lines", "middle" as "tail"), "bad_request");
  });

  test(
    "an unreadable file is refused with permission_denied",
    async () => {
      if (rerunUnprivileged(import.meta.path, "an unreadable file is refused with permission_denied")) return;
      const path = join(log, "private.log");
      writeFileSync(path, "private\n", { mode: 0o000 });
      try {
        await refusal(browser().sample(path, "lines", "tail"), "permission_denied");
      } finally {
        rmSync(path);
      }
    },
    RERUN_TIMEOUT_MS,
  );
});

describe("listing", () => {
  test("lists entries sorted, lstat'ed, with denied ones left out", async () => {
    const listing = await browser().list(log);
    const names = listing.entries.map((e) => e.name);
    expect(listing).toMatchObject({ path: log, truncated: false });
    expect(names).toEqual([...names].sort());
    for (const denied of ["server.key", "SERVER.KEY", "id_rsa", ".ssh"]) expect(names).not.toContain(denied);
    const byName = new Map(listing.entries.map((e) => [e.name, e]));
    expect(byName.get("app.log")).toMatchObject({ type: "file", size: 14 });
    expect(byName.get("sub")).toMatchObject({ type: "directory" });
    expect(byName.get("to-outside.log")).toMatchObject({ type: "symlink" });
    expect(byName.get("pipe")).toMatchObject({ type: "other" });
    expect(new Date(byName.get("app.log")!.modifiedAt).getTime()).toBeGreaterThan(0);
  });

  test("a directory of 5,000 entries lists maxDirEntries with truncated set", async () => {
    const listing = await browser().list(join(log, "many"));
    expect(listing.entries.length).toBe(1000);
    expect(listing.truncated).toBe(true);
    expect(listing.entries.map((e) => e.name)).toEqual(listing.entries.map((e) => e.name).sort());
  });

  test("denied entries do not count towards maxDirEntries", async () => {
    const listing = await browser({ maxDirEntries: 5000 }).list(join(log, "many"));
    expect(listing.entries.length).toBe(5000);
    expect(listing.truncated).toBe(false);
    expect(listing.entries.some((e) => e.name === "a.key")).toBe(false);
  });

  test("a file is refused with not_a_directory", async () => {
    await refusal(browser().list(join(log, "app.log")), "not_a_directory");
  });

  test("a root that is itself a symlink works, by either name", async () => {
    const b = browser({ allowedRoots: [join(root, "log-link")] });
    expect((await b.list(join(root, "log-link"))).entries.some((e) => e.name === "app.log")).toBe(true);
    expect(await b.sample(join(root, "log-link", "app.log"), "lines", "tail")).toMatchObject({ lines: 3 });
    expect(await b.sample(join(log, "app.log"), "lines", "tail")).toMatchObject({ lines: 3 });
  });

  test("an entry denied only by its real path is left out of a listing reached through a symlink", async () => {
    const b = browser({ allowedRoots: [root], denyPatterns: [...DENY, join(root, "data", "private")] });
    const names = (await b.list(join(root, "view"))).entries.map((e) => e.name);
    expect(names).toContain("public.log");
    expect(names).not.toContain("private");
    // The same directory by its real name hides it too, and the entry itself is refused by either name.
    expect((await b.list(join(root, "data"))).entries.map((e) => e.name)).not.toContain("private");
    await refusal(b.list(join(root, "view", "private")), "denied_by_pattern");
    await refusal(b.sample(join(root, "view", "private", "token.log"), "bytes", "head"), "denied_by_pattern");
  });

  test("a trailing slash names the same directory", async () => {
    expect((await browser().list(`${log}/`)).path).toBe(log);
  });
});

describe("refusals", () => {
  test("enabled false refuses everything with browse_disabled, before looking at the path", async () => {
    const b = browser({ enabled: false });
    for (const path of [join(log, "app.log"), "/etc/shadow", "relative", "/nonexistent"]) {
      expect((await refusal(b.sample(path, "lines", "tail"), "browse_disabled")).message).toBe(DISABLED_MESSAGE);
      await refusal(b.list(path), "browse_disabled");
    }
  });

  test("/etc/shadow and the pseudo-filesystems are denied even with the whole filesystem allowed", async () => {
    for (const roots of [["/"], ["*"]]) {
      const b = browser({ allowedRoots: roots });
      for (const path of ["/etc/shadow", "/etc/gshadow", "/proc/self/status", "/proc/1", "/sys/kernel/mm", "/root/.ssh/id_ed25519"]) {
        await refusal(b.sample(path, "bytes", "head"), "denied_by_pattern");
      }
      await refusal(b.list("/proc/self"), "denied_by_pattern");
      await refusal(b.list("/sys/class"), "denied_by_pattern");
    }
  });

  test("keys, id_rsa and .ssh are denied, whatever their case", async () => {
    const b = browser();
    for (const name of ["server.key", "SERVER.KEY", "id_rsa", ".ssh/authorized_keys"]) {
      const e = await refusal(b.sample(join(log, name), "bytes", "head"), "denied_by_pattern");
      expect(e.message).toContain("deny pattern");
    }
    await refusal(b.list(join(log, ".ssh")), "denied_by_pattern");
  });

  test("a symlink to a denied file or directory is denied", async () => {
    await refusal(browser().sample(join(log, "to-key.log"), "bytes", "head"), "denied_by_pattern");
    await refusal(browser().list(join(log, "keys")), "denied_by_pattern");
    await refusal(browser().sample(join(log, "keys", "authorized_keys"), "bytes", "head"), "denied_by_pattern");
    await refusal(browser({ allowedRoots: ["/"] }).sample(join(log, "innocent.log"), "bytes", "head"), "denied_by_pattern");
  });

  test("a hard link inside a root to a file outside it, or to a denied key, is refused; its target stays as it was", async () => {
    for (const name of ["hard-outside.log", "hard-key.log"]) {
      const e = await refusal(browser().sample(join(log, name), "bytes", "head"), "hard_link");
      expect(e.message).toContain("2 hard links");
      await refusal(browser({ allowedRoots: ["/"] }).sample(join(log, name), "lines", "tail"), "hard_link");
    }
    expect(readFileSync(join(outside, "secret.log"), "utf8")).toBe("outside\n");
    // A file with one name is still served.
    expect(await browser().sample(join(log, "app.log"), "lines", "tail")).toMatchObject({ lines: 3 });
  });

  test("SSH keys of every type, key stores, KeePass databases and dotenv files are denied by default", async () => {
    const dir = join(root, "secrets");
    mkdirSync(dir, { recursive: true });
    const names = ["id_ed25519", "id_ed25519.pub", "id_ecdsa", "id_dsa", ".env", ".env.production", "store.p12", "cert.PFX", "keystore.jks", "vault.kdbx"];
    for (const name of names) writeFileSync(join(dir, name), "secret");
    writeFileSync(join(dir, "environment.log"), "fine\n");
    const b = browser({ allowedRoots: [dir], denyPatterns: [...ALWAYS_DENIED] });
    for (const name of names) await refusal(b.sample(join(dir, name), "bytes", "head"), "denied_by_pattern");
    expect((await b.list(dir)).entries.map((e) => e.name)).toEqual(["environment.log"]);
  });

  test("a symlink leading out of the roots is refused", async () => {
    const e = await refusal(browser().sample(join(log, "to-outside.log"), "bytes", "head"), "outside_allowed_roots");
    expect(e.message).toContain("resolves to");
    await refusal(browser().sample(join(log, "innocent.log"), "bytes", "head"), "outside_allowed_roots");
    await refusal(browser().list(join(log, "outside-dir")), "outside_allowed_roots");
    await refusal(browser().sample(join(log, "outside-dir", "secret.log"), "bytes", "head"), "outside_allowed_roots");
  });

  test("a sibling sharing the root's prefix is outside it", async () => {
    await refusal(browser().sample(join(root, "logs", "app.log"), "bytes", "head"), "outside_allowed_roots");
    await refusal(browser().list(join(root, "logs")), "outside_allowed_roots");
  });

  test("`..` cannot climb out of a root", async () => {
    for (const path of [`${log}/../outside/secret.log`, `${log}/sub/../../outside/secret.log`, `${log}/../../../../etc/passwd`]) {
      await refusal(browser().sample(path, "bytes", "head"), "outside_allowed_roots");
    }
    await refusal(browser().list(`${log}/..`), "outside_allowed_roots");
  });

  test("NUL bytes, relative and over-long paths are bad requests", async () => {
    const b = browser({ allowedRoots: ["/"] });
    for (const path of [`${log}/app.log\0.txt`, "app.log", "", `/${"a".repeat(MAX_PATH_LENGTH)}`, 42 as unknown as string]) {
      await refusal(b.sample(path, "bytes", "head"), "bad_request");
      await refusal(b.list(path), "bad_request");
    }
  });

  test("a config that would make the checks meaningless is rejected", () => {
    expect(() => browser({ allowedRoots: ["var/log"] })).toThrow("browse.allowedRoots");
    expect(() => browser({ maxDirEntries: 0 })).toThrow("browse.maxDirEntries");
    expect(() => browser({ maxSampleBytes: 1.5 })).toThrow("browse.maxSampleBytes");
  });
});

test("every descriptor opened is closed, on success and on refusal", async () => {
  const b = browser();
  const before = readdirSync("/proc/self/fd").length;
  for (let i = 0; i < 20; i++) {
    await b.list(log);
    await b.sample(join(log, "big.log"), "lines", "tail");
    await b.sample(join(log, "sub"), "lines", "tail").catch(() => {});
    await b.sample(join(log, "pipe"), "lines", "tail").catch(() => {});
    await b.list(join(log, "app.log")).catch(() => {});
  }
  expect(readdirSync("/proc/self/fd").length).toBeLessThanOrEqual(before);
});
