/**
 * `secrets rotate-key` on real stores: the embedded store's generated key
 * (with a power cut mid-rotation), a key given by SVC_SECRETS_KEY, and two
 * replicas of a PostgreSQL store rotating in the README's steps. Every sealed
 * value (vault versions, collector tokens) opens afterwards with the new key
 * alone, and the config each collector is delivered stays byte for byte the
 * same.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Collectors } from "../collectors/collectors.ts";
import { CollectorTokens } from "../collectors/tokens.ts";
import { deliverable } from "../render/secrets.ts";
import { PostgresStore } from "../store/postgres.ts";
import { SqliteStore } from "../store/sqlite.ts";
import type { Store } from "../store/store.ts";
import { testDatabases, type TestDatabases } from "../store/testdb.ts";
import { cleanupAfterEach } from "../testutil.ts";
import { defaultKeyFile, loadSecrets, NEXT_KEY_SUFFIX, PREVIOUS_KEY_SUFFIX, type KeySource } from "./key.ts";
import { finishRotation, planRotation, resealAll, RotationError } from "./rotate.ts";
import { keyId, sealedKeyId, Secrets } from "./secrets.ts";
import { secretMarker } from "./values.ts";
import { SecretVault } from "./vault.ts";

const who = { actor: "cli:tester", remoteAddr: null };
const quiet = { info() {}, warn() {} };

let pg: TestDatabases;
beforeAll(async () => {
  pg = await testDatabases();
});
afterAll(() => pg?.dropAll());
const { cleanups, tempDir } = cleanupAfterEach("svc-rotate-");

/** Secrets in the vault and a collector's token, sealed with `keyring`; what each delivers. */
async function populate(store: Store, keyring: Secrets, count: number) {
  const vault = new SecretVault(store, keyring);
  const values = Array.from({ length: count }, (_, i) => `Bearer value-${i}-${randomBytes(6).toString("hex")} "$quoted"`);
  const sealed = values.map((v) => vault.seal(v, who));
  for (let i = 0; i < sealed.length; i += 50) await store.write(sealed.slice(i, i + 50).map((s) => s.op));
  const collectors = new Collectors(store);
  const tokens = new CollectorTokens(store, collectors, keyring);
  const collector = await collectors.create(who, { name: "edge", managementMode: "rcfg-remotecfg" });
  const { token } = await tokens.mint(who, collector.id);
  tokens.close();
  collectors.close();
  const ids = sealed.map((s) => s.id);
  const bodies = {
    otelcol: `exporters:\n  otlphttp:\n    headers:\n${ids.map((id, i) => `      H${i}: "${secretMarker(id)}"\n`).join("")}`,
    alloy: `otelcol.exporter.otlphttp "x" {\n  client {\n    headers = {\n${ids.map((id, i) => `      "H${i}" = "${secretMarker(id)}",\n`).join("")}    }\n  }\n}\n`,
  };
  return { values, ids, token, collectorId: collector.id, bodies };
}

/** What a server holding `keyring` delivers and offers: each runtime's config, and the collector's token. */
async function delivered(store: Store, keyring: Secrets, world: Awaited<ReturnType<typeof populate>>) {
  const vault = new SecretVault(store, keyring);
  const collectors = new Collectors(store);
  const tokens = new CollectorTokens(store, collectors, keyring);
  try {
    return {
      otelcol: await deliverable("otelcol", world.bodies.otelcol, (id) => vault.open(id)),
      alloy: await deliverable("alloy", world.bodies.alloy, (id) => vault.open(id)),
      token: await tokens.current(world.collectorId),
    };
  } finally {
    tokens.close();
    collectors.close();
  }
}

/** How many sealed values each key id sealed, from the documents themselves. */
async function sealedBy(store: Store): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const collection of ["secrets", "collector_tokens"]) {
    for (const doc of await store.list<{ sealed?: string }>(collection)) {
      const id = doc.data.sealed ? sealedKeyId(doc.data.sealed) : null;
      if (id) counts[id] = (counts[id] ?? 0) + 1;
    }
  }
  return counts;
}

/** The real store, except that its `failAt`-th write dies like a power cut (nothing of it lands). */
function cutAt(store: Store, failAt: number): Store {
  let writes = 0;
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === "write") {
        return (...args: Parameters<Store["write"]>) => {
          if (++writes === failAt) return Promise.reject(new Error("power cut"));
          return target.write(...args);
        };
      }
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

describe("rotate-key, embedded store", () => {
  test("the generated key: staged at .next, a power cut mid-way leaves everything readable, running again finishes, then .next replaces the key", async () => {
    const dir = tempDir();
    const boltPath = join(dir, "state.db");
    const store = new SqliteStore(boltPath);
    cleanups.push(() => store.close());
    const source: KeySource = { key: "", keyFile: "", backend: "embedded", boltPath };
    const keyFile = defaultKeyFile(boltPath);
    const old = loadSecrets(source, quiet);
    const world = await populate(store, old, 150); // two re-seal batches
    const before = await delivered(store, old, world);
    expect(before.otelcol.includes(JSON.stringify(world.values[0]!.replaceAll("$", () => "$$")))).toBe(true); // the plaintext, as otelcol quotes it
    expect(before.token).toBe(world.token);

    const plan = planRotation(source, undefined, quiet);
    const next = keyFile + NEXT_KEY_SUFFIX;
    expect(plan.staged).toBe(next);
    expect(statSync(next).mode & 0o777).toBe(0o600);
    const target = plan.keyring.keyId;
    expect(target).not.toBe(old.keyId);
    await expect(resealAll(cutAt(store, 2), plan.keyring, who)).rejects.toThrow("power cut");
    const halfway = await sealedBy(store);
    expect(halfway[target]).toBeGreaterThan(0);
    expect(halfway[old.keyId]).toBeGreaterThan(0);
    // A server started now opens both keys (the key file and .next): nothing it delivers changed.
    expect(await delivered(store, loadSecrets(source, quiet), world)).toEqual(before);

    // Running again resumes with the staged key.
    const again = planRotation(source, undefined, quiet);
    expect(again.keyring.keyId).toBe(target);
    const outcome = await resealAll(store, again.keyring, who);
    expect(outcome).toEqual({ from: { [old.keyId]: halfway[old.keyId]! }, to: target, count: halfway[old.keyId]!, unreadable: [] });
    finishRotation(again);
    expect(existsSync(next)).toBe(false);
    expect(await sealedBy(store)).toEqual({ [target]: 151 });
    const rotated = loadSecrets(source, quiet);
    expect(rotated.keyId).toBe(target);
    expect(await delivered(store, rotated, world)).toEqual(before);
    // The old key opens nothing any more.
    await expect(new SecretVault(store, old).open(world.ids[0]!)).rejects.toThrow("does not hold");

    const audit = await store.queryAudit({ limit: 10, action: "secrets.rotate_key" });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor: "cli:tester", resourceId: target, details: { to: target, count: halfway[old.keyId], unreadable: 0 } });
    const keyText = readFileSync(keyFile, "utf8").trim();
    expect(JSON.stringify(audit)).not.toContain(keyText);
  }, 30_000);

  test("--new-key-file: that key is staged and used; another staged rotation must finish first; a value no key opens is left and reported", async () => {
    const dir = tempDir();
    const boltPath = join(dir, "state.db");
    const store = new SqliteStore(boltPath);
    cleanups.push(() => store.close());
    const source: KeySource = { key: "", keyFile: "", backend: "embedded", boltPath };
    const world = await populate(store, loadSecrets(source, quiet), 3);
    const lost = new SecretVault(store, new Secrets([randomBytes(32)])).seal("sealed under a key nobody has", who);
    await store.write([lost.op]);
    const before = await delivered(store, loadSecrets(source, quiet), world);

    const wanted = randomBytes(32);
    const newKeyFile = join(dir, "new.key");
    writeFileSync(newKeyFile, wanted.toString("base64"), { mode: 0o600 });
    const other = join(dir, "other.key");
    writeFileSync(other, randomBytes(32).toString("base64"), { mode: 0o600 });
    writeFileSync(defaultKeyFile(boltPath) + NEXT_KEY_SUFFIX, randomBytes(32).toString("base64"), { mode: 0o600 });
    expect(() => planRotation(source, newKeyFile, quiet)).toThrow(RotationError);
    expect(() => planRotation(source, newKeyFile, quiet)).toThrow("unfinished rotation");
    unlinkSync(defaultKeyFile(boltPath) + NEXT_KEY_SUFFIX); // nothing was sealed with it

    const plan = planRotation(source, newKeyFile, quiet);
    expect(plan.keyring.keyId).toBe(keyId(wanted));
    const outcome = await resealAll(store, plan.keyring, who);
    expect(outcome.count).toBe(4);
    expect(outcome.unreadable).toEqual([`secrets/${lost.id}`]);
    finishRotation(plan);
    expect(readFileSync(defaultKeyFile(boltPath), "utf8").trim()).toBe(wanted.toString("base64"));
    expect(await delivered(store, loadSecrets(source, quiet), world)).toEqual(before);
    expect(() => planRotation(source, other, quiet)).not.toThrow(); // nothing staged any more
  });

  test("SVC_SECRETS_KEY (the key itself): --new-key-file is required, nothing is staged, the server then starts with the new key", async () => {
    const dir = tempDir();
    const boltPath = join(dir, "state.db");
    const store = new SqliteStore(boltPath);
    cleanups.push(() => store.close());
    const source: KeySource = { key: randomBytes(32).toString("base64"), keyFile: "", backend: "embedded", boltPath };
    const world = await populate(store, loadSecrets(source, quiet), 2);
    const before = await delivered(store, loadSecrets(source, quiet), world);
    expect(() => planRotation(source, undefined, quiet)).toThrow("--new-key-file");
    const wanted = randomBytes(32);
    writeFileSync(join(dir, "new.key"), wanted.toString("base64"), { mode: 0o600 });
    const plan = planRotation(source, join(dir, "new.key"), quiet);
    expect(plan.staged).toBeNull();
    await resealAll(store, plan.keyring, who);
    finishRotation(plan);
    expect(existsSync(defaultKeyFile(boltPath))).toBe(false);
    expect(await delivered(store, loadSecrets({ ...source, key: wanted.toString("base64") }, quiet), world)).toEqual(before);
  });
});

describe("rotate-key, two replicas of a PostgreSQL store", () => {
  test("the README's steps: open with the new key, seal with it, re-seal, drop the old; no replica meets a value it cannot open", async () => {
    const uri = await pg.create("rotate");
    const [storeA, storeB] = [await PostgresStore.open(uri), await PostgresStore.open(uri)];
    cleanups.push(
      () => storeA.close(),
      () => storeB.close(),
    );
    const dir = tempDir();
    const keyFile = join(dir, "secrets.key");
    const [k1, k2] = [randomBytes(32), randomBytes(32)];
    writeFileSync(keyFile, k1.toString("base64"), { mode: 0o600 });
    const source: KeySource = { key: "", keyFile, backend: "external", boltPath: join(dir, "unused.db") };
    /** A replica (re)started: it reads its keys at start. */
    const start = () => loadSecrets(source, quiet);
    const world = await populate(storeA, start(), 4);
    const before = await delivered(storeB, start(), world);

    // 1. Every replica opens with the new key too.
    writeFileSync(keyFile + NEXT_KEY_SUFFIX, k2.toString("base64"), { mode: 0o600 });
    let [a, b] = [start(), start()];
    expect(a.keyId).toBe(keyId(k1));
    // 2. Every replica seals with it: A restarts first and seals a new value; B, not yet restarted, opens it.
    renameSync(keyFile, keyFile + PREVIOUS_KEY_SUFFIX);
    renameSync(keyFile + NEXT_KEY_SUFFIX, keyFile);
    a = start();
    const fresh = new SecretVault(storeA, a).seal("Bearer set during the rotation", who);
    await storeA.write([fresh.op]);
    expect(await new SecretVault(storeB, b).open(fresh.id)).toBe("Bearer set during the rotation");
    b = start();
    // 3. rotate-key re-seals under the key the configuration seals with; another key is refused.
    const elsewhere = join(dir, "elsewhere.key");
    writeFileSync(elsewhere, randomBytes(32).toString("base64"), { mode: 0o600 });
    expect(() => planRotation(source, elsewhere, quiet)).toThrow("make every replica open with the new key");
    const plan = planRotation(source, undefined, quiet);
    expect(plan).toMatchObject({ staged: null, keyFile });
    const outcome = await resealAll(storeB, plan.keyring, who);
    expect(outcome).toMatchObject({ from: { [keyId(k1)]: 5 }, to: keyId(k2), count: 5 });
    finishRotation(plan);
    expect(readFileSync(keyFile, "utf8").trim()).toBe(k2.toString("base64"));
    // 4. The old key goes; both replicas deliver what they did.
    rmSync(keyFile + PREVIOUS_KEY_SUFFIX);
    expect(await sealedBy(storeA)).toEqual({ [keyId(k2)]: 6 });
    expect(await delivered(storeA, start(), world)).toEqual(before);
    expect(await delivered(storeB, start(), world)).toEqual(before);
    const [audit] = await storeA.queryAudit({ limit: 1, action: "secrets.rotate_key" });
    expect(audit!.details).toEqual({ from: { [keyId(k1)]: 5 }, to: keyId(k2), count: 5, unreadable: 0 });
  }, 30_000);
});
