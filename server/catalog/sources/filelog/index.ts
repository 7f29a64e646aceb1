/** The filelog source's folder (folder.ts): registered with the catalog when registry.ts imports it. */
import { registerFolder } from "../../folder.ts";
import { CORPUS } from "./corpus.ts";
import { filelogSource } from "./filelog.ts";
import { UPSTREAM } from "./upstream.ts";

registerFolder({ type: filelogSource, upstream: UPSTREAM, corpus: CORPUS });
