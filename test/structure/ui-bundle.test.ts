/**
 * What the browser UI pulls in at run time. It reads the server's contracts from
 * shared/ for their types only: a value import from a schema module would put
 * TypeBox into the bundle, and one from a server module would ship server code.
 * The server modules listed are today's exceptions, to move to shared/.
 */
import { expect, test } from "bun:test";
import { join, relative, resolve } from "node:path";

const ROOT = join(import.meta.dir, "../..");

const SERVER_MODULES_IN_UI = [
  "server/secrets/values.ts",
];

test("the UI bundle holds the UI, shared/ modules without TypeBox, and only the listed server modules", async () => {
  const result = await Bun.build({ entrypoints: [join(ROOT, "server/ui/main.tsx")], target: "browser", splitting: true, metafile: true });
  expect(result.success).toBe(true);
  // Inputs are named relative to the working directory; node_modules may be a link elsewhere.
  const inputs = Object.keys(result.metafile!.inputs).map((path) =>
    path.includes("node_modules/") ? path.replace(/^.*node_modules\//, "node_modules/") : relative(ROOT, resolve(path)),
  );
  expect(inputs.filter((path) => path.includes("@sinclair/typebox"))).toEqual([]);
  const outside = inputs.filter((path) => !path.startsWith("node_modules/") && !path.startsWith("server/ui/") && !path.startsWith("shared/"));
  expect(outside.sort()).toEqual(SERVER_MODULES_IN_UI);
});
