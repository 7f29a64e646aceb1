/**
 * OTTL filter and dry-run throughput (docs/architecture.md "Performance targets": ≥ 1,000,000 records/s on
 * the health-check template). `bun bench/ottl.ts [records] [rounds]` builds a
 * realistic mix of OTLP JSON log records (access logs, app logs, JSON and map
 * bodies, http.target/url.path attributes; about 18% health checks), parses it
 * from JSON text as the API would, then times, per case, `rounds` passes
 * after two warm-up passes and reports the median. The API runs the dry-run
 * in a worker (dryrun-isolated.ts); that path is reported for context.
 */
import { compileCondition, type LogView } from "../server/ottl/compile.ts";
import { dryRunIsolated } from "../server/ottl/dryrun-isolated.ts";
import { dryRun, type ChainProcessor } from "../server/ottl/dryrun.ts";
import { compileLogFilter } from "../server/ottl/filter.ts";
import { type AnyValue, type KeyValue, type LogRecord, type LogsData, validateLogs } from "../server/ottl/otlp.ts";
import { PROCESSOR_TEMPLATES } from "../server/ottl/templates.ts";

const total = Number(process.argv[2] ?? 200_000);
const rounds = Number(process.argv[3] ?? 7);

let seed = 42;
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

const str = (key: string, value: string): KeyValue => ({ key, value: { stringValue: value } });
const PATHS = ["/api/v1/orders", "/api/v1/users/42", "/checkout", "/static/app.js", "/api/live-stream", "/readyz", "/already", "/login?next=/ready"];
const HEALTH = ["/healthz", "/healthz?verbose=1", "/ready", "/live", "/healthy"];
const AGENTS = ["Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36", "curl/8.5.0", "kube-probe/1.29", "Go-http-client/1.1"];

function accessLine(path: string): string {
  return `10.0.${Math.floor(random() * 255)}.${Math.floor(random() * 255)} - - [12/Mar/2025:10:${String(Math.floor(random() * 60)).padStart(2, "0")}:07 +0000] "${pick(["GET", "POST", "HEAD"])} ${path} HTTP/1.1" ${pick([200, 200, 204, 301, 404, 500])} ${Math.floor(random() * 5000)} "-" "${pick(AGENTS)}"`;
}

function record(i: number): LogRecord {
  const roll = random();
  const common: KeyValue[] = [
    { key: "http.status_code", value: { intValue: String(pick([200, 201, 404, 500])) } },
    str("user_agent.original", pick(AGENTS)),
    str("net.peer.ip", `10.1.${i % 250}.${i % 199}`),
  ];
  let body: AnyValue;
  let attributes = common;
  if (roll < 0.12) body = { stringValue: accessLine(pick(HEALTH)) };
  else if (roll < 0.14) body = { stringValue: `{"level":"info","msg":"probe","path":"${pick(HEALTH)}"}` };
  else if (roll < 0.5) body = { stringValue: accessLine(pick(PATHS)) };
  else if (roll < 0.75) {
    body = {
      stringValue: `${pick(["INFO", "WARN", "ERROR"])} [worker-${i % 16}] order ${i} processed in ${Math.floor(random() * 900)}ms for customer c-${i % 977}`,
    };
  } else if (roll < 0.8) {
    body = { kvlistValue: { values: [str("msg", "payment authorized"), str("order", `o-${i}`), { key: "amount", value: { doubleValue: 12.5 } }] } };
  } else {
    const target = random() < 0.2 ? pick(HEALTH) : pick(PATHS);
    body = { stringValue: "request completed" };
    attributes = [str("http.method", "GET"), str(random() < 0.5 ? "http.target" : "url.path", target.split("?")[0]!), ...common];
  }
  return {
    timeUnixNano: String(1_741_774_000_000_000_000n + BigInt(i) * 1_000_000n),
    severityNumber: 9,
    severityText: "INFO",
    body,
    attributes,
    traceId: "5b8efff798038103d269b633813fc60c",
    spanId: "eee19b7ec3c1b174",
  };
}

function buildInput(): LogsData {
  const perScope = 500;
  const resourceLogs: LogsData["resourceLogs"] = [];
  for (let made = 0; made < total; ) {
    const scopeLogs = [];
    for (let s = 0; s < 2 && made < total; s++) {
      const n = Math.min(perScope, total - made);
      scopeLogs.push({ scope: { name: s === 0 ? "access" : "app" }, logRecords: Array.from({ length: n }, (_, k) => record(made + k)) });
      made += n;
    }
    resourceLogs.push({ resource: { attributes: [str("service.name", `svc-${resourceLogs.length % 20}`), str("host.name", "node-1")] }, scopeLogs });
  }
  // Parsed from text, so the objects have the shapes the API's JSON.parse gives.
  return JSON.parse(JSON.stringify({ resourceLogs })) as LogsData;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Records per second of `pass`, which handles all `total` records once. */
function measure(name: string, pass: () => unknown): number;
function measure(name: string, pass: () => Promise<unknown>): Promise<number>;
function measure(name: string, pass: () => unknown): number | Promise<number> {
  const rates: number[] = [];
  const report = () => {
    const rate = median(rates);
    console.log(
      `| ${name} | ${Math.round(rate).toLocaleString("en-US")} | ${Math.round(Math.min(...rates)).toLocaleString("en-US")} | ${Math.round(Math.max(...rates)).toLocaleString("en-US")} |`,
    );
    return rate;
  };
  if (pass.constructor.name === "AsyncFunction") {
    return (async () => {
      for (let i = 0; i < rounds + 2; i++) {
        const t0 = performance.now();
        await pass();
        if (i >= 2) rates.push(total / ((performance.now() - t0) / 1000));
      }
      return report();
    })();
  }
  for (let i = 0; i < rounds + 2; i++) {
    const t0 = performance.now();
    pass();
    const seconds = (performance.now() - t0) / 1000;
    if (i >= 2) rates.push(total / seconds);
  }
  return report();
}

const input = buildInput();
const template = PROCESSOR_TEMPLATES.find((t) => t.id === "drop-health-check-logs")!;
const health: ChainProcessor = { nodeId: "health", ...template.processor };
const conditions = (template.processor.config.logs as { log_record: string[] }).log_record;
const records = input.resourceLogs.flatMap((rl) =>
  rl.scopeLogs!.flatMap((sl) => sl.logRecords!.map((log) => ({ log, scope: sl.scope, resource: rl.resource }))),
);
const drop = compileLogFilter({ logs: { log_record: conditions } });
const bodyOnly = compileCondition(conditions[0]!);

const kept = dryRun(input, [health]).steps[0]!.out;
console.log(`${total.toLocaleString("en-US")} records, ${(((total - kept) / total) * 100).toFixed(1)}% health checks dropped, median of ${rounds} passes`);
console.log("| case | median records/s | min | max |");
console.log("|---|---|---|---|");

const view: LogView = { log: {}, scope: undefined, resource: undefined };
const evaluate = (predicate: (v: LogView) => boolean) => () => {
  let dropped = 0;
  for (const r of records) {
    view.log = r.log;
    view.scope = r.scope;
    view.resource = r.resource;
    if (predicate(view)) dropped++;
  }
  return dropped;
};

const results = {
  filter: measure("compiled health-check filter (3 conditions, error_mode ignore)", evaluate(drop)),
  body: measure("one compiled condition: `IsMatch(body, ...)`", evaluate(bodyOnly)),
  validate: measure("input validation alone (`validateLogs`)", () => validateLogs(input)),
  dryRun: measure("`dryRun` with the template (validate + filter + output)", () => dryRun(input, [health])),
  chain: measure("`dryRun`, chain: resource insert → template → attributes upsert → batch", () =>
    dryRun(input, [
      { nodeId: "env", type: "resource", config: { attributes: [{ key: "deployment.environment", action: "insert", value: "prod" }] } },
      health,
      { nodeId: "mark", type: "attributes", config: { actions: [{ key: "filtered", action: "upsert", value: true }] } },
      { nodeId: "batch", type: "batch", config: { send_batch_size: 8192, timeout: "200ms" } },
    ]),
  ),
};
const text = JSON.stringify(input);
measure("for context, not in the target: `JSON.parse` + `JSON.stringify` of the input (the HTTP edge's share)", () => JSON.stringify(JSON.parse(text)));
await measure(
  "for context, not in the target: `dryRunIsolated` with the template, as the API runs it (input and output cross to a worker as JSON text)",
  async () => dryRunIsolated(input, [health]),
);

const target = 1_000_000;
const missed = Object.entries(results).filter(([name, rate]) => name !== "chain" && rate < target);
console.log(missed.length === 0 ? `target ≥ ${target.toLocaleString("en-US")} records/s: met` : `target missed by: ${missed.map(([n]) => n).join(", ")}`);
