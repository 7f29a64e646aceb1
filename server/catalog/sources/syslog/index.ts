/** The syslog source's folder (folder.ts): registered with the catalog when registry.ts imports it. */
import { registerFolder } from "../../folder.ts";
import { CORPUS } from "./corpus.ts";
import { syslogSource } from "./syslog.ts";
import { UPSTREAM } from "./upstream.ts";

registerFolder({ type: syslogSource, upstream: UPSTREAM, corpus: CORPUS });
