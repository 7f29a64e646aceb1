/**
 * Log files matched by globs. Runtime R reads them with the generally
 * available `local.file_match` + `loki.source.file` chain into
 * `otelcol.receiver.loki`; its `otelcol.receiver.filelog` is public preview
 * and would not load on a collector run at the default stability level. The
 * shaping transform trims the line and leaves only `log.file.name`, as the
 * filelog receiver's defaults do, so records match (log-records.ts).
 * Parsing and multiline: filelog-parse.ts.
 */
import { Type } from "@sinclair/typebox";
import { attr, block, ref } from "../../alloy-syntax.ts";
import { lokiToOtelcol } from "../loki-chain.ts";
import { alloyMultiline, multilineSchema, otelcolParse, parseAlloyProblem, parseProblems, parserSchema, parseStatements } from "../filelog-parse.ts";
import { Closed, HOST_PATH_REFERENCE, NoReferences, StringEnum } from "../../schemas.ts";
import { defineSource } from "../../types.ts";
import { logDelivery, upstreamAbout } from "../delivery.ts";

const Glob = Type.String({ minLength: 1, pattern: "^\\S", description: "A file glob; ** matches across directories." });

export const filelogSource = defineSource({
  kind: "source",
  type: "filelog",
  title: "Log files",
  description: "Tails log files that match glob patterns, e.g. /var/log/nginx/*.log.",
  signals: ["logs"],
  delivery: logDelivery(
    "filelog",
    "loki.source.file into otelcol.receiver.loki, then a transform trims the body as stanza does, removes filename, log.file.path and loki.attribute.labels, and parses the line and its severity as the receiver's parser would",
    upstreamAbout("otelcol/receiver/loki", "translator/loki", "trim", "source/file", "parser/{json", "helper/time.go", "ottlfuncs", "split", "multiline"),
  ),
  schema: Closed({
    include: Type.Array(NoReferences(Glob, HOST_PATH_REFERENCE), { minItems: 1, description: "Globs of the files to read." }),
    exclude: Type.Array(Glob, { default: [], description: "Globs of files to skip even when included." }),
    start_at: NoReferences(
      StringEnum(["beginning", "end"], {
        default: "end",
        description: "Where to start in a file seen for the first time.",
      }),
      "svc reads it to build Alloy's configuration",
    ),
    parser: parserSchema(),
    multiline: multilineSchema(),
  }),
  check(config, root) {
    return parseProblems(config.parser, config.multiline, root);
  },
  alloyProblem(config) {
    return parseAlloyProblem(config.multiline);
  },
  otelcol(config) {
    return {
      type: "filelog",
      config: {
        include: config.include,
        ...(config.exclude.length > 0 ? { exclude: config.exclude } : {}),
        start_at: config.start_at,
        ...otelcolParse(config.parser, config.multiline),
      },
    };
  },
  alloy(config, label, output) {
    const exclude = alloyExclude(config.exclude);
    const receiver = attr("forward_to", [ref(`otelcol.receiver.loki.${label}.receiver`)]);
    const multiline = alloyMultiline(config.multiline, label, receiver);
    return [
      block("local.file_match", label, [
        attr(
          "path_targets",
          config.include.map((path): Record<string, string> => (exclude === undefined ? { __path__: path } : { __path__: path, __path_exclude__: exclude })),
        ),
      ]),
      block("loki.source.file", label, [
        attr("targets", ref(`local.file_match.${label}.targets`)),
        multiline === undefined ? receiver : attr("forward_to", [ref(`loki.process.${label}.receiver`)]),
        attr("tail_from_end", config.start_at === "end"),
      ]),
      ...(multiline === undefined ? [] : [multiline]),
      ...lokiToOtelcol("filelog", label, output, parseStatements(config.parser)),
    ];
  },
});

/** `__path_exclude__` takes one doublestar glob; several become one `{a,b}` alternation. */
function alloyExclude(globs: readonly string[]): string | undefined {
  if (globs.length === 0) return undefined;
  return globs.length === 1 ? globs[0] : `{${globs.join(",")}}`;
}
