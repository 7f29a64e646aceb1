import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { findType } from "../catalog/index.ts";
import { SqliteStore } from "../store/sqlite.ts";
import { refusal } from "../testutil.ts";
import { keepStored, readForm, sealPlaintext, secretAudit } from "./fields.ts";
import { Secrets } from "./secrets.ts";
import { secretUpdatedAt } from "./values.ts";
import { SECRETS_COLLECTION, SecretVault } from "./vault.ts";

const schema = findType("destination", "otlphttp")!.schema;
const who = { actor: "sa:test", remoteAddr: null };
const PLAINTEXT = "Bearer fields-7c1e-plaintext";

let store: SqliteStore;
let vault: SecretVault;
beforeEach(() => {
  store = new SqliteStore(":memory:");
  vault = new SecretVault(store, new Secrets([randomBytes(32)]));
});
afterEach(() => store.close());

/** Seals `plaintext` into the vault for real and returns its stored reference. */
async function stored(plaintext: string): Promise<{ secret: string }> {
  const { id, op } = vault.seal(plaintext, who);
  await store.write([op]);
  return { secret: id };
}

describe("keepStored", () => {
  test("a keep marker becomes the secret stored at its path; other values stay as sent", async () => {
    const ref = await stored(PLAINTEXT);
    const current = { endpoint: "http://gw:4318", headers: { Authorization: ref, "X-Env": { env: "TEAM" } } };
    const input = {
      endpoint: "http://gw:4318",
      headers: { Authorization: { secret: true, set: true, updatedAt: "2020-01-01T00:00:00.000Z" }, "X-Env": { env: "OTHER" }, "X-New": "v" },
    };
    expect(keepStored(schema, input, current, "config")).toEqual({
      endpoint: "http://gw:4318",
      headers: { Authorization: ref, "X-Env": { env: "OTHER" }, "X-New": "v" },
    });
    expect(input.headers.Authorization).toEqual({ secret: true, set: true, updatedAt: "2020-01-01T00:00:00.000Z" });
  });

  test("keeping where no secret is stored (nothing, an env value, a plain value) is a 400 naming each path", () => {
    const current = { headers: { "X-Env": { env: "TEAM" }, "X-Plain": { value: "a", secret: false } } };
    const keep = { secret: true };
    const error = refusal(() => keepStored(schema, { headers: { Authorization: keep, "X-Env": keep, "X-Plain": keep } }, current, "configOverrides"));
    expect(error.details.map((d) => d.path)).toEqual([
      "configOverrides.headers.Authorization",
      "configOverrides.headers.X-Env",
      "configOverrides.headers.X-Plain",
    ]);
    expect(error.message).toContain("configOverrides.headers.Authorization");
    expect(refusal(() => keepStored(schema, { headers: { Authorization: keep } }, undefined, "config")).details).toEqual([
      { path: "config.headers.Authorization", message: expect.stringContaining("none is stored here") },
    ]);
  });

  test("a plaintext stored before secrets were kept apart can be kept (and so gets sealed)", () => {
    expect(keepStored(schema, { headers: { Authorization: { secret: true } } }, { headers: { Authorization: PLAINTEXT } }, "config")).toEqual({
      headers: { Authorization: PLAINTEXT },
    });
  });
});

describe("sealPlaintext", () => {
  test("a plaintext is sealed into a new version whose write holds no plaintext; other forms stay", async () => {
    const config = { endpoint: "http://gw:4318", headers: { Authorization: PLAINTEXT, "X-Env": { env: "TEAM" }, "X-Plain": { value: "ops", secret: false } } };
    const sealed = await sealPlaintext(vault, who, schema, config, undefined);
    const ref = sealed.config.headers as Record<string, { secret: string }>;
    expect(sealed.config).toEqual({
      endpoint: "http://gw:4318",
      headers: { Authorization: { secret: expect.any(String) }, "X-Env": { env: "TEAM" }, "X-Plain": { value: "ops", secret: false } },
    });
    expect(sealed.ops).toEqual([{ op: "put", collection: SECRETS_COLLECTION, id: ref.Authorization!.secret, data: expect.any(Object), expect: "absent" }]);
    expect(JSON.stringify(sealed.ops)).not.toContain("fields-7c1e");
    await store.write(sealed.ops);
    expect(await vault.open(ref.Authorization!.secret)).toBe(PLAINTEXT);
  });

  test("two plaintexts in one write are both sealed, each into a version of its own", async () => {
    const second = "key-5d2a-second-plaintext";
    const sealed = await sealPlaintext(vault, who, schema, { headers: { Authorization: PLAINTEXT, "X-Api-Key": second } }, undefined);
    const refs = sealed.config.headers as Record<string, { secret: string }>;
    expect(refs).toEqual({ Authorization: { secret: expect.any(String) }, "X-Api-Key": { secret: expect.any(String) } });
    expect(refs.Authorization!.secret).not.toBe(refs["X-Api-Key"]!.secret);
    expect(sealed.ops).toHaveLength(2);
    const written = JSON.stringify([sealed.config, sealed.ops]);
    expect(written).not.toContain("fields-7c1e");
    expect(written).not.toContain("5d2a");
    await store.write(sealed.ops);
    expect([await vault.open(refs.Authorization!.secret), await vault.open(refs["X-Api-Key"]!.secret)]).toEqual([PLAINTEXT, second]);
  });

  test("the value stored at the same path keeps its version: no new id, no write", async () => {
    const ref = await stored(PLAINTEXT);
    const again = await sealPlaintext(vault, who, schema, { headers: { Authorization: PLAINTEXT } }, { headers: { Authorization: ref } });
    expect(again).toEqual({ config: { headers: { Authorization: ref } }, ops: [] });
    // Equal value, other path: a version of its own.
    const moved = await sealPlaintext(vault, who, schema, { headers: { "X-Key": PLAINTEXT } }, { headers: { Authorization: ref } });
    expect((moved.config.headers as Record<string, { secret: string }>)["X-Key"]!.secret).not.toBe(ref.secret);
    expect(moved.ops).toHaveLength(1);
  });

  test("a changed value, or a stored version the vault cannot open, gets a new version", async () => {
    const ref = await stored(PLAINTEXT);
    const changed = await sealPlaintext(vault, who, schema, { headers: { Authorization: "Bearer other" } }, { headers: { Authorization: ref } });
    expect(changed.ops).toHaveLength(1);
    expect(changed.config).not.toEqual({ headers: { Authorization: ref } });
    const lost = { secret: Bun.randomUUIDv7() };
    const resealed = await sealPlaintext(vault, who, schema, { headers: { Authorization: PLAINTEXT } }, { headers: { Authorization: lost } });
    expect(resealed.ops).toHaveLength(1);
    expect((resealed.config.headers as Record<string, { secret: string }>).Authorization!.secret).not.toBe(lost.secret);
  });
});

describe("secretAudit", () => {
  const resource = { type: "destination" as const, id: "d1", root: "config" };

  test("set for a new version or a secret where there was none, clear where one goes; never a value or an id", async () => {
    const a = await stored(PLAINTEXT);
    const b = await stored("Bearer two");
    const before = { headers: { Authorization: a, "X-Key": b, "X-Env": { env: "E" }, "X-Same": a } };
    const after = {
      headers: { Authorization: { secret: "0190d4a6-9a7b-7cc1-8d2e-3f4a5b6c7d8e" }, "X-Env": b, "X-Key": { value: "p", secret: false }, "X-Same": a },
    };
    const entries = secretAudit(who, schema, before, after, resource);
    expect(entries.map((e) => [e.action, e.resource, e.resourceId, e.details])).toEqual([
      ["secret.set", "destination", "d1", { path: "config.headers.Authorization" }],
      ["secret.clear", "destination", "d1", { path: "config.headers.X-Key" }],
      ["secret.set", "destination", "d1", { path: "config.headers.X-Env" }],
    ]);
    expect(JSON.stringify(entries)).not.toContain(a.secret);
    expect(JSON.stringify(entries)).not.toContain(b.secret);
  });

  test("removing the whole config clears every secret it held, with the details given", async () => {
    const a = await stored(PLAINTEXT);
    const entries = secretAudit(who, schema, { headers: { Authorization: a } }, undefined, {
      type: "collector",
      id: "c1",
      root: "configOverrides",
      details: { destinationId: "d1" },
    });
    expect(entries.map((e) => [e.action, e.resource, e.resourceId, e.details])).toEqual([
      ["secret.clear", "collector", "c1", { path: "configOverrides.headers.Authorization", destinationId: "d1" }],
    ]);
    expect(secretAudit(who, schema, { headers: { Authorization: a } }, { headers: { Authorization: a } }, resource)).toEqual([]);
  });
});

describe("readForm", () => {
  test("a stored secret reads as its summary with the time it was set; env and plain values as stored", async () => {
    const storedAt = Date.now();
    const ref = await stored(PLAINTEXT);
    const config = { endpoint: "http://gw:4318", headers: { Authorization: ref, "X-Env": { env: "TEAM" }, "X-Plain": { value: "ops", secret: false } } };
    const shown = readForm(schema, config);
    expect(shown).toEqual({
      endpoint: "http://gw:4318",
      headers: {
        Authorization: { secret: true, set: true, updatedAt: secretUpdatedAt(ref.secret) },
        "X-Env": { env: "TEAM" },
        "X-Plain": { value: "ops", secret: false },
      },
    });
    // Set when it was stored: between the call and now.
    const updatedAt = Date.parse((shown.headers as { Authorization: { updatedAt: string } }).Authorization.updatedAt);
    expect(updatedAt).toBeGreaterThanOrEqual(storedAt - (storedAt % 1000));
    expect(updatedAt).toBeLessThanOrEqual(Date.now());
    expect(JSON.stringify(shown)).not.toContain(ref.secret);
    expect(config.headers.Authorization).toBe(ref);
  });

  test("a plaintext not yet moved to the vault never reads back", () => {
    const shown = readForm(schema, { headers: { Authorization: PLAINTEXT } });
    expect(shown).toEqual({ headers: { Authorization: { secret: true, set: true, updatedAt: null } } });
  });
});
