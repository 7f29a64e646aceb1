/**
 * The dry-run's input, record by record: body and severity, the record's
 * attributes, its resource's attributes, and what became of it (kept, or
 * which step dropped it, from the answer's `dropped` places).
 */
import { ListTable } from "../components/ListTable.tsx";
import type { DryRunAnswer } from "../../../shared/pipelines.ts";

type KeyValue = { key: string; value: unknown };
interface InputRecord {
  body?: unknown;
  severityText?: string;
  attributes?: KeyValue[];
}
interface Row {
  record: InputRecord;
  resource: KeyValue[];
}

/** OTLP AnyValue as text: a string as itself, anything else as JSON. */
export function valueText(value: unknown): string {
  const any = value as { stringValue?: unknown } | undefined;
  if (typeof any?.stringValue === "string") return any.stringValue;
  const [only] = Object.values((value ?? {}) as Record<string, unknown>);
  return Object.keys((value ?? {}) as object).length === 1 && typeof only !== "object" ? String(only) : JSON.stringify(value ?? null);
}

/** Resources, scopes and records in order: the places the answer's `dropped` counts. */
export function flatRecords(logs: unknown): Row[] {
  const data = logs as { resourceLogs?: { resource?: { attributes?: KeyValue[] }; scopeLogs?: { logRecords?: InputRecord[] }[] }[] };
  return (data.resourceLogs ?? []).flatMap((r) =>
    (r.scopeLogs ?? []).flatMap((s) => (s.logRecords ?? []).map((record) => ({ record, resource: r.resource?.attributes ?? [] }))),
  );
}

function Tags({ values }: { values: KeyValue[] }) {
  if (values.length === 0) return <span className="muted">none</span>;
  return (
    <>
      {values.map((a, i) => (
        <span key={`${a.key}-${i}`} className="tag">
          {a.key}={valueText(a.value)}
        </span>
      ))}
    </>
  );
}

export function DryRunRecords({ input, answer }: { input: unknown; answer: DryRunAnswer }) {
  const droppedBy = new Map<number, string>();
  for (const step of answer.steps) for (const at of step.dropped) droppedBy.set(at, step.nodeId);
  return (
    <ListTable
      caption={{ id: "dry-run-records-caption", text: "Records", visible: true }}
      className="dry-run-records"
      columns={["#", "Record", "Attributes", "Resource", "Result"]}
    >
      {flatRecords(input).map(({ record, resource }, i) => {
        const step = droppedBy.get(i);
        return (
          <tr key={i} className={step ? "dropped" : undefined}>
            <td>{i + 1}</td>
            <th scope="row">
              {record.severityText && <span className="muted">{record.severityText} </span>}
              <code>{valueText(record.body)}</code>
            </th>
            <td>
              <Tags values={record.attributes ?? []} />
            </td>
            <td>
              <Tags values={resource} />
            </td>
            <td>
              {step ? (
                <span className="step-error">
                  Dropped by <code>{step}</code>
                </span>
              ) : (
                "Kept"
              )}
            </td>
          </tr>
        );
      })}
    </ListTable>
  );
}
