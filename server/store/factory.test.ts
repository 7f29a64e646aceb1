import { describe, expect, test } from "bun:test";
import { externalAdapter } from "./factory.ts";

describe("externalAdapter", () => {
  test("the URI's scheme names the adapter, in any case", () => {
    expect(externalAdapter("postgres://svc@db/svc")?.kind).toBe("PostgreSQL");
    expect(externalAdapter("PostgreSQL://svc@db/svc")?.kind).toBe("PostgreSQL");
    expect(externalAdapter("mongodb://db:27017/svc")?.kind).toBe("MongoDB");
    expect(externalAdapter("mongodb+srv://db.example.com/svc")?.kind).toBe("MongoDB");
  });

  test("any other scheme, or none, names no adapter", () => {
    for (const uri of ["mysql://db/svc", "db.example.com", "", "constructor://x", "postgres", "mongodb+srvx://db"]) {
      expect(externalAdapter(uri)).toBeNull();
    }
  });
});
