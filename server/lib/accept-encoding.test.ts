import { expect, test } from "bun:test";
import { acceptsEncoding } from "./accept-encoding.ts";

test("a coding is taken when named or by *, and refused by q=0 or by absence", () => {
  expect(acceptsEncoding("gzip", "gzip")).toBe(true);
  expect(acceptsEncoding("deflate, gzip;q=0.5", "gzip")).toBe(true);
  expect(acceptsEncoding("x-gzip", "gzip")).toBe(true);
  expect(acceptsEncoding("*", "br")).toBe(true);
  expect(acceptsEncoding("GZIP ; Q=1", "gzip")).toBe(true);
  expect(acceptsEncoding("gzip;q=0", "gzip")).toBe(false);
  expect(acceptsEncoding("*, gzip;q=0", "gzip")).toBe(false);
  expect(acceptsEncoding("*;q=0", "gzip")).toBe(false);
  expect(acceptsEncoding("deflate, br", "gzip")).toBe(false);
  expect(acceptsEncoding("gzipped", "gzip")).toBe(false);
  expect(acceptsEncoding("", "gzip")).toBe(false);
  expect(acceptsEncoding(null, "gzip")).toBe(false);
});
