import { expect, test } from "bun:test";
import type { AppError } from "../errors.ts";
import { route } from "./route.ts";
import { Router } from "./router.ts";

const r = (method: "GET" | "POST" | "DELETE", path: string) =>
  route({ method, path, scope: "collectors:read", tag: "t", summary: path, handler: async () => path });

const router = new Router([
  r("GET", "/collectors"),
  r("POST", "/collectors"),
  r("GET", "/collectors/snippet"),
  r("GET", "/collectors/{id}"),
  r("DELETE", "/collectors/{id}"),
  r("GET", "/collectors/{id}/config-history"),
]);

test("literal segments win over parameters", () => {
  expect(router.match("GET", "/collectors/snippet").route.path).toBe("/collectors/snippet");
  const match = router.match("GET", "/collectors/abc");
  expect(match.route.path).toBe("/collectors/{id}");
  expect(match.params).toEqual({ id: "abc" });
  expect(router.match("GET", "/collectors/a%20b/config-history").params).toEqual({ id: "a b" });
  expect(router.match("GET", "/collectors/").route.path).toBe("/collectors");
});

test("unknown paths are 404, known paths with other methods 405 with Allow", () => {
  const error = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      return e as AppError;
    }
    throw new Error("no error");
  };
  expect(error(() => router.match("GET", "/nope")).status).toBe(404);
  expect(error(() => router.match("GET", "/collectors/x/y")).status).toBe(404);
  const malformed = error(() => router.match("GET", "/collectors/%E0%A4%A"));
  expect([malformed.status, malformed.code]).toEqual([400, "validation_failed"]);
  const notAllowed = error(() => router.match("PUT", "/collectors/x"));
  expect(notAllowed.status).toBe(405);
  expect(notAllowed.headers.Allow).toBe("GET, DELETE");
});

test("a route declared twice, or clashing parameter names, is refused at start", () => {
  expect(() => new Router([r("GET", "/a"), r("GET", "/a")])).toThrow(/declared twice/);
  expect(() => new Router([r("GET", "/a/{id}"), r("GET", "/a/{name}/x")])).toThrow(/clashes/);
});
