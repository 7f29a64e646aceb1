/** The kubeletstats source's folder (folder.ts): registered with the catalog when registry.ts imports it. */
import { registerFolder } from "../../folder.ts";
import { CORPUS } from "./corpus.ts";
import { kubeletstatsSource } from "./kubeletstats.ts";
import { UPSTREAM } from "./upstream.ts";

registerFolder({ type: kubeletstatsSource, upstream: UPSTREAM, corpus: CORPUS });
