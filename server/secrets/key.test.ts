import { afterEach, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultKeyFile, loadSecrets, NEXT_KEY_SUFFIX, PREVIOUS_KEY_SUFFIX } from "./key.ts";
import { keyId, Secrets, sealedKeyId } from "./secrets.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "svc-key-"));
  dirs.push(dir);
  return dir;
}
function logger() {
  const lines: [string, unknown][] = [];
  return { lines, info: (obj: unknown, msg: string) => void lines.push([msg, obj]), warn: (obj: unknown, msg: string) => void lines.push([msg, obj]) };
}

describe("the secrets key", () => {
  test("embedded: created beside the state file on first start (0600, logged with its path), read again afterwards", () => {
    const dir = tempDir();
    const boltPath = join(dir, "data", "state.db");
    const log = logger();
    const first = loadSecrets({ key: "", keyFile: "", backend: "embedded", boltPath }, log as never);
    const path = defaultKeyFile(boltPath);
    expect(path).toBe(join(dir, "data", "secrets.key"));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(log.lines).toEqual([[expect.stringContaining("created the secrets key"), { path }]]);
    expect(JSON.stringify(log.lines)).not.toContain(readFileSync(path, "utf8").trim());
    const again = loadSecrets({ key: "", keyFile: "", backend: "embedded", boltPath }, logger() as never);
    expect(again.keyId).toBe(first.keyId);
    expect(again.openString(first.seal("t", "c"), "c")).toBe("t");
  });

  test("the key itself wins over a key file, which wins over the embedded default", () => {
    const dir = tempDir();
    const [a, b] = [randomBytes(32), randomBytes(32)];
    const file = join(dir, "k");
    writeFileSync(file, b.toString("base64"), { mode: 0o600 });
    const boltPath = join(dir, "state.db");
    expect(loadSecrets({ key: a.toString("base64"), keyFile: file, backend: "external", boltPath }, logger() as never).keyId).toBe(keyId(a));
    expect(loadSecrets({ key: "", keyFile: file, backend: "embedded", boltPath }, logger() as never).keyId).toBe(keyId(b));
    expect(existsSync(defaultKeyFile(boltPath))).toBe(false);
  });

  test("external without a key is refused, naming the keys; nothing is created", () => {
    const dir = tempDir();
    const boltPath = join(dir, "state.db");
    expect(() => loadSecrets({ key: "", keyFile: "", backend: "external", boltPath }, logger() as never)).toThrow(/secrets\.keyFile or SVC_SECRETS_KEY/);
    expect(existsSync(defaultKeyFile(boltPath))).toBe(false);
  });

  test("a key file others can read is used, with a warning; one holding no key is refused", () => {
    const dir = tempDir();
    const file = join(dir, "k");
    writeFileSync(file, randomBytes(32).toString("base64"));
    chmodSync(file, 0o644);
    const log = logger();
    loadSecrets({ key: "", keyFile: file, backend: "external", boltPath: join(dir, "s.db") }, log as never);
    expect(log.lines[0]![0]).toContain("chmod 600");
    writeFileSync(file, "short");
    expect(() => loadSecrets({ key: "", keyFile: file, backend: "external", boltPath: join(dir, "s.db") }, logger() as never)).toThrow(
      "must hold the base64 of 32",
    );
  });

  test("<key file>.next and .previous also open (named in the log), the key file alone seals; the key itself has no siblings", () => {
    const dir = tempDir();
    const [current, next, previous] = [randomBytes(32), randomBytes(32), randomBytes(32)];
    const file = join(dir, "k");
    writeFileSync(file, current.toString("base64"), { mode: 0o600 });
    writeFileSync(file + NEXT_KEY_SUFFIX, next.toString("base64"), { mode: 0o600 });
    writeFileSync(file + PREVIOUS_KEY_SUFFIX, previous.toString("base64"), { mode: 0o600 });
    const log = logger();
    const keyring = loadSecrets({ key: "", keyFile: file, backend: "external", boltPath: join(dir, "s.db") }, log as never);
    expect(keyring.keyId).toBe(keyId(current));
    expect(sealedKeyId(keyring.seal("v", "c"))).toBe(keyId(current));
    for (const key of [next, previous]) expect(keyring.openString(new Secrets([key]).seal("v", "c"), "c")).toBe("v");
    expect(log.lines.map(([, fields]) => fields)).toEqual([
      { path: file + NEXT_KEY_SUFFIX, keyId: keyId(next) },
      { path: file + PREVIOUS_KEY_SUFFIX, keyId: keyId(previous) },
    ]);
    // The embedded default's siblings count too; secrets.key (the key itself) has none.
    const boltPath = join(dir, "state.db");
    writeFileSync(defaultKeyFile(boltPath), current.toString("base64"), { mode: 0o600 });
    writeFileSync(defaultKeyFile(boltPath) + NEXT_KEY_SUFFIX, next.toString("base64"), { mode: 0o600 });
    const embedded = loadSecrets({ key: "", keyFile: "", backend: "embedded", boltPath }, logger() as never);
    expect(embedded.openString(new Secrets([next]).seal("v", "c"), "c")).toBe("v");
    const given = loadSecrets({ key: current.toString("base64"), keyFile: "", backend: "embedded", boltPath }, logger() as never);
    expect(() => given.open(new Secrets([next]).seal("v", "c"), "c")).toThrow("does not hold");
  });
});
