/**
 * How the forms read a sensitive field's value (secrets.ts, summary.ts)
 * against the catalog's real schemas: which kind a value is, what a switch
 * of kind keeps, which header names warn, and that a summary never takes a
 * secret's read form apart.
 */
import { expect, test } from "bun:test";
import { catalogView } from "../../catalog/index.ts";
import { envNameProblem, looksLikeCredential, secretChangedAt, secretKindOf, sensitiveKeys, storedSecret, switchSecretKind } from "./secrets.ts";
import { fieldKind, mapValues, type Schema } from "./schema.ts";
import { configSummary } from "./summary.ts";

const schemaOf = (kind: "sources" | "destinations", type: string) => catalogView()[kind].find((e) => e.type === type)!.schema as Schema;
const READ = { secret: true, set: true, updatedAt: "2024-05-01T10:00:00.000Z" };

test("header maps of every destination that has them are edited as secrets; a plain string map is not", () => {
  for (const type of ["otlp", "otlphttp", "loki", "prometheusremotewrite"]) {
    const headers = schemaOf("destinations", type).properties!.headers!;
    expect([type, fieldKind(headers)]).toEqual([type, "secretMap"]);
    expect(mapValues(headers)).toMatchObject({ type: "string", sensitive: true, plainAllowed: true });
    expect(sensitiveKeys(schemaOf("destinations", type))).toEqual(["headers"]);
  }
  expect(sensitiveKeys(schemaOf("sources", "filelog"))).toEqual([]);
  expect(fieldKind({ type: "string", sensitive: true })).toBe("secret");
});

test("a value's kind, and what switching kind keeps", () => {
  expect(secretKindOf(READ)).toBe("secret");
  expect(secretKindOf("typed")).toBe("secret");
  expect(secretKindOf(undefined)).toBe("secret");
  expect(secretKindOf({ env: "API_KEY" })).toBe("env");
  expect(secretKindOf({ value: "tenant-a", secret: false })).toBe("plain");

  // Back to Secret: the stored one, or the plain text typed so far.
  expect(switchSecretKind("secret", { env: "X" }, READ)).toBe(READ);
  expect(switchSecretKind("secret", { value: "Bearer abc", secret: false }, READ)).toBe("Bearer abc");
  expect(switchSecretKind("secret", { value: "", secret: false }, undefined)).toBeUndefined();
  // A secret's text never moves into a visible box; an env name or plain text is kept across switches.
  expect(switchSecretKind("plain", "typed secret", undefined)).toEqual({ value: "", secret: false });
  expect(switchSecretKind("plain", READ, READ)).toEqual({ value: "", secret: false });
  expect(switchSecretKind("env", { env: "A" }, undefined)).toEqual({ env: "A" });
  expect(switchSecretKind("env", "typed", undefined)).toEqual({ env: "" });

  expect(storedSecret(READ)).toBe(READ);
  for (const other of ["legacy plaintext", undefined, { env: "A" }, { value: "x", secret: false }]) expect(storedSecret(other)).toBeUndefined();
  expect(secretChangedAt(READ)).toBe(READ.updatedAt);
  expect(secretChangedAt({ env: "A" })).toBeNull();
});

test("header names that carry credentials, whatever their case, warn as plain text; others do not", () => {
  for (const name of [
    "Authorization",
    "authorization",
    "Proxy-Authorization",
    "X-Api-Key",
    "DD-API-KEY",
    "api_key",
    "apikey",
    "X-Auth-Token",
    "token",
    "X-Secret",
    "X-Password",
  ]) {
    expect([name, looksLikeCredential(name)]).toEqual([name, true]);
  }
  for (const name of ["X-Scope-OrgID", "X-Team", "Content-Type", "X-Keyspace", "Accept"]) expect([name, looksLikeCredential(name)]).toEqual([name, false]);
});

test("environment variable names follow the collector's env provider", () => {
  expect(envNameProblem("VENDOR_KEY")).toBeNull();
  expect(envNameProblem("_x1")).toBeNull();
  expect(envNameProblem("")).toContain("Name the environment variable");
  for (const bad of ["1KEY", "MY-KEY", "A B", "${X}"]) expect(envNameProblem(bad)).toContain("letters, digits and _");
});

test("a summary words sensitive values by kind, never a secret's text, and leaves other fields alone", () => {
  const schema = schemaOf("destinations", "otlphttp");
  const config = {
    endpoint: "https://gw.example:4318",
    headers: { Authorization: READ, "X-Api-Key": { env: "VENDOR_KEY" }, "X-Scope-OrgID": { value: "tenant-a", secret: false }, Legacy: "Bearer old" },
  };
  expect(configSummary(config, schema)).toEqual([
    "endpoint=https://gw.example:4318",
    "headers.Authorization=(secret)",
    "headers.X-Api-Key=(host env VENDOR_KEY)",
    "headers.X-Scope-OrgID=tenant-a",
    "headers.Legacy=(secret)",
  ]);
  // Before the catalog has loaded, the read forms are worded the same, never taken apart.
  expect(configSummary(config)).toEqual([
    "endpoint=https://gw.example:4318",
    "headers.Authorization=(secret)",
    "headers.X-Api-Key=(host env VENDOR_KEY)",
    "headers.X-Scope-OrgID=tenant-a",
    "headers.Legacy=Bearer old",
  ]);
  // A field the schema does not mark sensitive is shown as it is, whatever its shape.
  expect(configSummary({ include: ["/a/*.log"], resource: { env: "prod" } }, schemaOf("sources", "filelog"))).toEqual([
    "include=/a/*.log",
    "resource.env=prod",
  ]);
});
