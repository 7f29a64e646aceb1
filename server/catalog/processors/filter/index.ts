/** The filter processor's folder (folder.ts): registered with the catalog when registry.ts imports it. */
import { registerFolder } from "../../folder.ts";
import { CORPUS } from "./corpus.ts";
import { filterProcessor } from "./filter.ts";
import { UPSTREAM } from "./upstream.ts";

registerFolder({ type: filterProcessor, upstream: UPSTREAM, corpus: CORPUS });
