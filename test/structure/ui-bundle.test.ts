/**
 * What the browser UI pulls in at run time. It reads the server's contracts from
 * shared/ for their types only: a value import from a schema module would put
 * TypeBox into the bundle, and the UI imports nothing of the server.
 */
import { expect, test } from "bun:test";
import { join, relative, resolve } from "node:path";

const ROOT = join(import.meta.dir, "../..");

test("the UI bundle holds the UI and shared/ modules without TypeBox, nothing of the server", async () => {
  const result = await Bun.build({ entrypoints: [join(ROOT, "server/ui/main.tsx")], target: "browser", splitting: true, metafile: true });
  expect(result.success).toBe(true);
  // Inputs are named relative to the working directory; node_modules may be a link elsewhere.
  const inputs = Object.keys(result.metafile!.inputs).map((path) =>
    path.includes("node_modules/") ? path.replace(/^.*node_modules\//, "node_modules/") : relative(ROOT, resolve(path)),
  );
  expect(inputs.filter((path) => path.includes("@sinclair/typebox"))).toEqual([]);
  expect(inputs.filter((path) => path.startsWith("shared/")).length).toBeGreaterThan(0);
  const outside = inputs.filter((path) => !path.startsWith("node_modules/") && !path.startsWith("server/ui/") && !path.startsWith("shared/"));
  expect(outside).toEqual([]);
});
