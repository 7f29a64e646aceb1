/**
 * Live rates on the canvas: a picker (off, summed over the collectors the
 * pipeline applies to, or one of them) and a poll of
 * GET /pipelines/{id}/rates every few seconds. Each node gets records/s in
 * and out and errors/s; a node whose errors rose since the last poll is
 * marked. The server sums the first 50 collectors and says how many.
 */
import { useRef, useState } from "react";
import type { PipelineRates } from "../../../shared/pipelines.ts";
import { api } from "../client.ts";
import { useLoad } from "../load.ts";

export interface NodeRate {
  in: number | null;
  out: number | null;
  errors: number | null;
  rising: boolean;
}

const POLL_MS = 5_000;

export function useLiveRates(pipelineId: string, choice: string) {
  const [rates, setRates] = useState<Map<string, NodeRate>>(new Map());
  const previous = useRef(new Map<string, number | null>());
  const { data: answer } = useLoad(
    () => api.get("/pipelines/{id}/rates", { params: { id: pipelineId }, query: { collector: choice && choice !== "all" ? choice : undefined } }),
    `${pipelineId}|${choice}`,
    {
      everyMs: POLL_MS,
      onData: (a) => {
        const next = new Map<string, NodeRate>();
        for (const n of a.nodes) next.set(n.nodeId, { ...n, rising: (n.errors ?? 0) > 0 && (n.errors ?? 0) > (previous.current.get(n.nodeId) ?? 0) });
        previous.current = new Map(a.nodes.map((n) => [n.nodeId, n.errors]));
        setRates(next);
      },
    },
  );
  return { answer, rates };
}

/** `12.3/s`, or `–` when nothing measures it. */
export function perSecond(value: number | null | undefined): string {
  if (value === null || value === undefined) return "–";
  return `${value >= 100 ? Math.round(value) : Math.round(value * 10) / 10}/s`;
}

export function LiveRatesPicker({ choice, onChoice, answer }: { choice: string; onChoice: (c: string) => void; answer: PipelineRates | null }) {
  return (
    <div className="live-rates-picker">
      <label htmlFor="live-rates">Live rates</label>
      <select id="live-rates" value={choice} onChange={(e) => onChoice(e.target.value)}>
        <option value="all">All collectors it applies to (sum)</option>
        {(answer?.choices ?? []).map((c) => (
          <option key={c.id} value={c.id}>
            {c.name}
          </option>
        ))}
      </select>
      {answer && (
        <span className="muted" role="status">
          {answer.applied === 0
            ? "No collector runs this pipeline yet."
            : choice === "all"
              ? `Summed over ${answer.collectors} of ${answer.applied} collector${answer.applied === 1 ? "" : "s"}${answer.applied > answer.collectors ? " (the first 50)" : ""}.`
              : ""}
        </span>
      )}
    </div>
  );
}

/** A live rates line inside a node card. */
export function NodeRates({ rate }: { rate: NodeRate | undefined }) {
  if (!rate) return null;
  return (
    <span className={`pipeline-node-rates${rate.rising ? " rising" : ""}`}>
      in {perSecond(rate.in)} · out {perSecond(rate.out)}
      {(rate.errors ?? 0) > 0 && (
        <span className="node-errors">
          {" "}
          · {rate.rising ? "⚠ " : ""}errors {perSecond(rate.errors)}
        </span>
      )}
    </span>
  );
}
