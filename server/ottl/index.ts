/**
 * OTTL conditions and the log dry-run: parse and check conditions in any
 * filter context, print them back, compile log conditions into fast
 * predicates over OTLP JSON, and run a processor chain over sample logs.
 * See README.md for the supported language and the semantics.
 */
export type { Call, CompareOp, Condition, Enum, Key, Literal, Path, Value } from "./ast.ts";
export { compileCondition, type LogPredicate, type LogView } from "./compile.ts";
export { OTTL_CONTEXTS, type OttlContext } from "./contexts.ts";
export { dryRun, type ChainProcessor, type DryRunResult, type DryRunStep } from "./dryrun.ts";
export { OttlError, OttlEvalError } from "./errors.ts";
export { formatCondition } from "./format.ts";
export type { AnyValue, InstrumentationScope, KeyValue, LogRecord, LogsData, Resource, ResourceLogs, ScopeLogs } from "./otlp.ts";
export { checkCondition, parseCondition } from "./parser.ts";
export {
  AttributeAction,
  AttributesConfig,
  BatchConfig,
  FilterConfig,
  PROCESSOR_TYPES,
  ResourceConfig,
  validateProcessor,
  type ValidProcessor,
} from "./processors.ts";
export { compileRe2, Re2Error, translateRe2 } from "./regex.ts";
export { PROCESSOR_TEMPLATES } from "./templates.ts";
