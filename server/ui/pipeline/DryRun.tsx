/**
 * Dry-run: OTLP JSON logs (pasted, or the built-in mixed sample) through
 * the draft's processor chain on the server (POST /pipelines/{id}/dry-run
 * with the chain as shown, so unsaved edits are tried before saving). Shows
 * records in and out per step, each input record with its attributes and
 * resource and the step that dropped it (DryRunRecords.tsx), the Final
 * Output (the records that survive, resource attributes too),
 * and for which source types that result holds on Alloy collectors as well.
 */
import { useState, type FormEvent } from "react";
import { ApiError } from "../api.ts";
import { api } from "../client.ts";
import { useAction } from "../action.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { ListTable } from "../components/ListTable.tsx";
import { SAMPLE_TEXT } from "./sample.ts";
import type { DryRunAnswer } from "../../../shared/pipelines.ts";
import { DryRunRecords, flatRecords, valueText } from "./DryRunRecords.tsx";
import type { TopologyNode } from "./types.ts";

export function DryRun({ pipelineId, chain }: { pipelineId: string; chain: TopologyNode[] | null }) {
  const [input, setInput] = useState("");
  const [result, setResult] = useState<{ input: unknown; answer: DryRunAnswer } | null>(null);
  const { busy, error, setError, run } = useAction();

  function onRun(event: FormEvent) {
    event.preventDefault();
    let parsed: unknown;
    try {
      parsed = JSON.parse(input);
    } catch (caught) {
      setResult(null);
      setError(new ApiError(0, "invalid_json", `The input is not JSON: ${(caught as Error).message}`));
      return;
    }
    const processors = chain?.map((n) => ({ id: n.id, type: n.processor!.type, config: n.processor!.config ?? {} }));
    run(
      () => api.post("/pipelines/{id}/dry-run", { params: { id: pipelineId }, body: processors ? { input: parsed, processors } : { input: parsed } }),
      (answer) => setResult({ input: parsed, answer }),
      (caught) => {
        setResult(null);
        setError(caught);
      },
    );
  }

  // The surviving records with their resource's attributes.
  const records = result ? flatRecords(result.answer.output) : [];
  return (
    <section className="detail-block dry-run" aria-labelledby="dry-run-title">
      <h2 id="dry-run-title">Dry-run</h2>
      <form onSubmit={onRun} aria-label="Dry-run input">
        <label htmlFor="dry-run-input" className="block-label">
          OTLP JSON logs
        </label>
        <textarea
          id="dry-run-input"
          className="code-input"
          rows={8}
          spellCheck={false}
          value={input}
          onChange={(e) => setInput(e.target.value)}
          placeholder='{"resourceLogs": [{"scopeLogs": [{"logRecords": [{"body": {"stringValue": "GET /healthz"}}]}]}]}'
          aria-describedby="dry-run-hint"
        />
        <p id="dry-run-hint" className="hint">
          {chain
            ? `Runs the ${chain.length} processor${chain.length === 1 ? "" : "s"} of the chain as shown, saved or not.`
            : "Runs the saved pipeline's chain."}
        </p>
        <div className="dry-run-actions">
          <button type="button" className="button" onClick={() => setInput(SAMPLE_TEXT)}>
            Load mixed sample
          </button>
          <button type="submit" className="button primary" disabled={busy || input.trim() === ""}>
            Run
          </button>
        </div>
      </form>
      <ErrorMessage error={error} />
      <p className="muted" aria-live="polite">
        {busy
          ? "Running…"
          : result
            ? `${records.length} record${records.length === 1 ? "" : "s"} survive ${result.answer.steps.length} step${result.answer.steps.length === 1 ? "" : "s"}.`
            : ""}
      </p>
      {result && (
        <>
          <ListTable caption={{ id: "dry-run-steps-caption", text: "Steps", visible: true }} columns={["Processor", "Type", "In", "Out"]}>
            {result.answer.steps.map((step) => (
              <tr key={step.nodeId}>
                <th scope="row">
                  <code>{step.nodeId}</code>
                  {step.error && <span className="step-error">{step.error}</span>}
                  {step.notSimulated && <span className="muted">{step.notSimulated}</span>}
                </th>
                <td>{step.type}</td>
                <td>{step.in}</td>
                <td>{step.out}</td>
              </tr>
            ))}
          </ListTable>
          <RuntimeNote runtimes={result.answer.runtimes} />
          <DryRunRecords input={result.input} answer={result.answer} />
          <section className="final-output" aria-labelledby="final-output-title">
            <h3 id="final-output-title">Final output</h3>
            {records.length === 0 ? (
              <p className="muted">No records survive.</p>
            ) : (
              <ol className="output-records">
                {records.map(({ record: r, resource }, i) => (
                  <li key={i}>
                    {r.severityText && <span className="muted">{r.severityText} </span>}
                    <code>{valueText(r.body)}</code>
                    {(r.attributes ?? []).map((a) => (
                      <span key={a.key} className="tag">
                        {a.key}={valueText(a.value)}
                      </span>
                    ))}
                    {resource.map((a) => (
                      <span key={`resource-${a.key}`} className="tag resource-tag">
                        resource {a.key}={valueText(a.value)}
                      </span>
                    ))}
                  </li>
                ))}
              </ol>
            )}
          </section>
        </>
      )}
    </section>
  );
}

/** Whether the result holds on both runtimes, per source type that may feed the pipeline; what differs where it does not. */
function RuntimeNote({ runtimes }: { runtimes: DryRunAnswer["runtimes"] }) {
  if (runtimes.length === 0) return null;
  const holding = runtimes.filter((r) => r.holds).map((r) => r.sourceType);
  const differing = runtimes.filter((r) => !r.holds);
  return (
    <div className="runtime-parity" role="note" aria-label="Runtimes">
      {holding.length > 0 && <p className="hint">Holds on OpenTelemetry Collector and Alloy collectors alike for {holding.join(", ")} sources.</p>}
      {differing.map((r) => (
        <p key={r.sourceType} className="step-error">
          Not on Alloy collectors for {r.sourceType} sources (such routes are refused there): {r.problems[0]?.message}
        </p>
      ))}
    </div>
  );
}
