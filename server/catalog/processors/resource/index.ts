/** The resource processor's folder (folder.ts): registered with the catalog when registry.ts imports it. */
import { registerFolder } from "../../folder.ts";
import { CORPUS } from "./corpus.ts";
import { resourceProcessor } from "./resource.ts";
import { UPSTREAM } from "./upstream.ts";

registerFolder({ type: resourceProcessor, upstream: UPSTREAM, corpus: CORPUS });
