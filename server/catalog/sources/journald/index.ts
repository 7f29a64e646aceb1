/** The journald source's folder (folder.ts): registered with the catalog when registry.ts imports it. */
import { registerFolder } from "../../folder.ts";
import { CORPUS } from "./corpus.ts";
import { journaldSource } from "./journald.ts";
import { UPSTREAM } from "./upstream.ts";

registerFolder({ type: journaldSource, upstream: UPSTREAM, corpus: CORPUS });
