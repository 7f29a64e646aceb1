/** The attributes processor's folder (folder.ts): registered with the catalog when registry.ts imports it. */
import { registerFolder } from "../../folder.ts";
import { CORPUS } from "./corpus.ts";
import { attributesProcessor } from "./attributes.ts";
import { UPSTREAM } from "./upstream.ts";

registerFolder({ type: attributesProcessor, upstream: UPSTREAM, corpus: CORPUS });
