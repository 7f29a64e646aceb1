/** The kafka source's folder (folder.ts): registered with the catalog when registry.ts imports it. */
import { registerFolder } from "../../folder.ts";
import { CORPUS } from "./corpus.ts";
import { kafkaSource } from "./kafka.ts";
import { UPSTREAM } from "./upstream.ts";

registerFolder({ type: kafkaSource, upstream: UPSTREAM, corpus: CORPUS });
