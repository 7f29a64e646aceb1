import { expect, test } from "bun:test";
import { apiPath } from "./client.ts";

test("parameters are filled in encoded, and a path without one is left as it is", () => {
  expect(apiPath("/collectors/{id}/config-history/{seq}", { id: "a b/c", seq: "3" })).toBe("/collectors/a%20b%2Fc/config-history/3");
  expect(apiPath("/dashboard")).toBe("/dashboard");
});

test("a missing parameter is refused rather than sent as a literal {name}", () => {
  expect(() => apiPath("/collectors/{id}", {})).toThrow("no value for {id}");
});

test("the query leaves out undefined and null, repeats a list's key, and takes URLSearchParams as they are", () => {
  expect(apiPath("/collectors", {}, { limit: 20, q: undefined, cursor: null, match: ["env=prod", 'region=~"us-.*"'] })).toBe(
    "/collectors?limit=20&match=env%3Dprod&match=region%3D%7E%22us-.*%22",
  );
  expect(
    apiPath(
      "/audit",
      {},
      new URLSearchParams([
        ["actor", "ann"],
        ["limit", "50"],
      ]),
    ),
  ).toBe("/audit?actor=ann&limit=50");
  expect(apiPath("/rollouts", {}, {})).toBe("/rollouts");
});
