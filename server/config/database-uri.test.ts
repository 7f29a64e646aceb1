import { describe, expect, test } from "bun:test";
import { buildDatabaseUri, redactUri, type DatabaseParts } from "./database-uri.ts";

const NONE: DatabaseParts = { uri: "", server: "", user: "", password: "", database: "" };
const build = (parts: Partial<DatabaseParts>) => buildDatabaseUri({ ...NONE, ...parts });

describe("buildDatabaseUri", () => {
  test("neither uri nor server gives the empty string", () => {
    expect(build({})).toBe("");
    expect(build({ user: "svc", password: "pw", database: "svc" })).toBe("");
  });

  test("uri wins over server and is used exactly as given", () => {
    const uri = "mongodb://given.example.com:27017/other?tls=true";
    expect(build({ uri, server: "db.example.com", user: "svc", password: "pw", database: "svc" })).toBe(uri);
  });

  test("a bare host builds an SRV-style mongodb+srv URI", () => {
    expect(build({ server: "db.example.com", database: "svc" })).toBe("mongodb+srv://db.example.com/svc");
  });

  test("host:port builds a plain mongodb URI", () => {
    expect(build({ server: "db.example.com:27017", database: "svc" })).toBe("mongodb://db.example.com:27017/svc");
  });

  test("a bracketed IPv6 address with a port builds a plain mongodb URI", () => {
    expect(build({ server: "[::1]:27017", database: "svc" })).toBe("mongodb://[::1]:27017/svc");
  });

  test("user and password are URL-escaped", () => {
    const uri = build({ server: "db.example.com", user: "svc", password: "p@ss:w/rd", database: "svc" });
    expect(uri).toBe("mongodb+srv://svc:p%40ss%3Aw%2Frd@db.example.com/svc");
    // A URL parser reads the original credentials back.
    const url = new URL(uri);
    expect(decodeURIComponent(url.password)).toBe("p@ss:w/rd");
    expect(url.hostname).toBe("db.example.com");
    expect(url.pathname).toBe("/svc");
  });

  test("a user name with reserved characters is escaped too", () => {
    expect(build({ server: "db.example.com:27017", user: "svc@corp", password: "a b%c", database: "svc" })).toBe(
      "mongodb://svc%40corp:a%20b%25c@db.example.com:27017/svc",
    );
  });

  test("a user without a password carries no colon", () => {
    expect(build({ server: "db.example.com", user: "svc", database: "svc" })).toBe("mongodb+srv://svc@db.example.com/svc");
  });

  test("the database name is appended, escaped, and left out when empty", () => {
    expect(build({ server: "db.example.com", database: "fleet" })).toBe("mongodb+srv://db.example.com/fleet");
    expect(build({ server: "db.example.com", database: "my db/x" })).toBe("mongodb+srv://db.example.com/my%20db%2Fx");
    expect(build({ server: "db.example.com" })).toBe("mongodb+srv://db.example.com");
  });
});

describe("redactUri", () => {
  test("masks the password of a built URI", () => {
    const uri = build({ server: "db.example.com", user: "svc", password: "p@ss:w/rd", database: "svc" });
    expect(redactUri(uri)).toBe("mongodb+srv://svc:***@db.example.com/svc");
  });

  test.each([
    ["mongodb://svc:s3cret@db.example.com:27017/svc", "mongodb://svc:***@db.example.com:27017/svc"],
    ["mongodb+srv://svc:s3cret@db.example.com/svc?retryWrites=false", "mongodb+srv://svc:***@db.example.com/svc?retryWrites=false"],
    ["postgres://svc:s3cret@pg.example.com:5432/svc", "postgres://svc:***@pg.example.com:5432/svc"],
    ["postgresql://svc:@pg.example.com/svc", "postgresql://svc:***@pg.example.com/svc"],
    ["mongodb://svc:s3cret@a.example.com:27017,b.example.com:27017/svc", "mongodb://svc:***@a.example.com:27017,b.example.com:27017/svc"],
  ])("masks %p", (uri, expected) => {
    expect(redactUri(uri)).toBe(expected);
  });

  test.each(["p/ss", "p@ss", "p?ss", "p#ss", "p:ss"])("masks a hand-written password holding an unescaped %p", (password) => {
    const redacted = redactUri(`mongodb://svc:${password}@db.example.com:27017/svc`);
    expect(redacted).toBe("mongodb://svc:***@db.example.com:27017/svc");
  });

  test.each(["mongodb://db.example.com:27017/svc", "mongodb+srv://svc@db.example.com/svc", "postgres://pg.example.com/svc", ""])(
    "leaves %p, which has no password, alone",
    (uri) => {
      expect(redactUri(uri)).toBe(uri);
    },
  );
});

test("a seed list of host:port entries builds a plain mongodb:// URI", () => {
  const uri = buildDatabaseUri({ uri: "", server: "a.example:27017, b.example:27018", user: "", password: "", database: "svc" });
  expect(uri).toBe("mongodb://a.example:27017,b.example:27018/svc");
});
