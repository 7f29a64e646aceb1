import { expect, test } from "bun:test";
import { topologyTag } from "./topology-tag.ts";

test("the tag ignores key order and absent fields, and changes with the content", () => {
  const a = topologyTag({ nodes: [{ id: "in", kind: "source", position: { x: 1, y: 2 } }], edges: [] });
  const b = topologyTag({ edges: [], nodes: [{ position: { y: 2, x: 1 }, kind: "source", id: "in", ref: undefined }] });
  expect(a).toBe(b);
  expect(a).toMatch(/^[0-9a-z]{1,12}$/);
  expect(topologyTag({ nodes: [{ id: "in", kind: "source", position: { x: 1, y: 3 } }], edges: [] })).not.toBe(a);
});
