/**
 * A Bun macro: runs bundle.ts at transpile time and inlines the built files
 * as constants. Under `bun build --compile` that happens once, so the UI is
 * part of dist/svc-server with no files beside it; under `bun server/main.ts`
 * it happens when assets.ts is first imported, so sources are always fresh.
 */
import { join } from "node:path";
import type { UiFile } from "./files.ts";

export function embedUi(): UiFile[] {
  // A child process: Bun.build inside a macro would deadlock the bundler.
  const child = Bun.spawnSync([process.execPath, join(import.meta.dir, "bundle.ts")], { stderr: "pipe" });
  if (!child.success) throw new Error(`building the UI failed:\n${child.stderr.toString()}`);
  return JSON.parse(child.stdout.toString()) as UiFile[];
}
