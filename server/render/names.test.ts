import { describe, expect, test } from "bun:test";
import { identifier, NameTable } from "./names.ts";

describe("identifier", () => {
  test("lower-cases and joins words with _", () => {
    expect(identifier("Nginx access-logs")).toBe("nginx_access_logs");
    expect(identifier("  /var/log/*.log  ")).toBe("var_log_log");
    expect(identifier("Café Öl")).toBe("cafe_ol");
  });

  test("never starts with a digit, never is a keyword, may be empty", () => {
    expect(identifier("2nd source")).toBe("_2nd_source");
    expect(identifier("NULL")).toBe("null_");
    expect(identifier("true")).toBe("true_");
    expect(identifier("***")).toBe("");
  });
});

describe("NameTable", () => {
  test("suffixes clashes in claim order and falls back when nothing is usable", () => {
    const names = new NameTable();
    expect(names.claim("Logs")).toBe("logs");
    expect(names.claim("logs!")).toBe("logs_2");
    expect(names.claim("LOGS")).toBe("logs_3");
    expect(names.claim("logs_2")).toBe("logs_2_2");
    expect(names.claim("???", "src-9")).toBe("src_9");
    expect(names.claim("???", "!!!")).toBe("component");
  });
});
