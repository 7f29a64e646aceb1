/** The batch processor's folder (folder.ts): registered with the catalog when registry.ts imports it. */
import { registerFolder } from "../../folder.ts";
import { CORPUS } from "./corpus.ts";
import { batchProcessor } from "./batch.ts";
import { UPSTREAM } from "./upstream.ts";

registerFolder({ type: batchProcessor, upstream: UPSTREAM, corpus: CORPUS });
