/**
 * A git bundle (v2) of the whole configuration history: what `git clone
 * svc-config.bundle` and `git bundle verify` read. Both HEAD and the branch
 * point at the head so a clone checks the branch out.
 */
import { REF } from "./repo-backend.ts";

export function gitBundle(head: string, packfile: Uint8Array): Uint8Array<ArrayBuffer> {
  const header = new TextEncoder().encode(`# v2 git bundle\n${head} HEAD\n${head} ${REF}\n\n`);
  const bundle = new Uint8Array(header.length + packfile.length);
  bundle.set(header);
  bundle.set(packfile, header.length);
  return bundle;
}
