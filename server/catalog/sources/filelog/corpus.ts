/** Filelog source configs the conformance test renders (folder.ts). */
import type { CorpusConfig } from "../../folder.ts";

export const CORPUS: readonly CorpusConfig[] = [
  { include: ["/var/log/*.log"] },
  { include: ["/var/log/a.log", "/srv/**/*.log"], exclude: ["/var/log/x.log"], start_at: "beginning" },
  { include: ["/var/log/*.log"], exclude: ["/var/log/x.log", "/var/log/*.gz"] },
  // Parsing and multiline (filelog-parse.ts); line_end_pattern, which Alloy refuses, is checked on its own (upstream/conform.test.ts).
  { include: ["/var/log/*.json"], parser: { format: "json", timestamp: { field: "ts", layout: "%Y-%m-%dT%H:%M:%S%z" }, severity: { field: "log.level" } } },
  {
    include: ["/var/log/*.log"],
    parser: { format: "regex", regex: "^(?P<ts>\\S+) (?P<level>\\w+) (?P<msg>.*)$", severity: { field: "level" } },
    multiline: { line_start_pattern: "^\\S" },
  },
];
