/**
 * Throughput of one collector. The charts come from the server's history (the
 * last hour in 15 s buckets, so they open filled) and refresh every 15 s; the
 * tables under them give the latest rates (polled every 5 s) as text, and the
 * topology shows the same rates on each flow. Both poll only while visible.
 */
import { api } from "../client.ts";
import { useLoad } from "../load.ts";
import { Chart, type ChartSeries } from "../components/Chart.tsx";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { LastSeen } from "../components/LastSeen.tsx";
import { ListTable } from "../components/ListTable.tsx";
import { formatBytes, formatDuration, formatRate } from "../format.ts";
import { Topology } from "./Topology.tsx";
import type { Throughput } from "./types.ts";
import type { ThroughputHistory } from "../../../shared/throughput.ts";

const POLL_MS = 5000;
const HISTORY_MS = 15_000;

const measuredAny = (series: ChartSeries[]) => series.some((s) => s.values.some((v) => v !== null));

/** The history's charts: records/s in and out per signal, errors/s per signal, CPU and memory. */
function HistoryCharts({ history }: { history: ThroughputHistory }) {
  const span = history.times.length * history.step;
  const records: ChartSeries[] = history.signals.flatMap((s) => [
    { label: `${s.signal} in`, values: s.in },
    { label: `${s.signal} out`, values: s.out },
  ]);
  const errors: ChartSeries[] = history.signals.map((s) => ({ label: s.signal, values: s.errors }));
  const cpu = [{ label: "CPU", values: history.process.cpu.map((v) => (v === null ? null : v * 100)) }];
  const memory = [{ label: "Memory (RSS)", values: history.process.memoryRss }];
  const percent = (v: number) => `${v.toFixed(v < 10 ? 1 : 0)} %`;
  return (
    <div className="chart-grid">
      {records.length > 0 && <Chart title="Records per second in and out" times={history.times} series={records} format={formatRate} span={span} />}
      {errors.length > 0 && <Chart title="Errors per second" times={history.times} series={errors} format={formatRate} span={span} />}
      {measuredAny(cpu) && <Chart title="CPU" times={history.times} series={cpu} format={percent} span={span} />}
      {measuredAny(memory) && <Chart title="Memory" times={history.times} series={memory} format={formatBytes} span={span} />}
    </div>
  );
}

const rate = (value: number | null) => (value === null ? <span className="muted">—</span> : formatRate(value));

export function ThroughputSection({ collectorId, reload }: { collectorId: string; reload: number }) {
  const polled = { everyMs: POLL_MS, pauseHidden: true };
  const current = useLoad(() => api.get("/collectors/{id}/throughput", { params: { id: collectorId } }), `${collectorId}|${reload}`, polled);
  const past = useLoad(() => api.get("/collectors/{id}/throughput/history", { params: { id: collectorId } }), `${collectorId}|${reload}`, {
    ...polled,
    everyMs: HISTORY_MS,
  });
  // Routes by id, named "source → pipeline", for the routes table.
  const named = useLoad(() => {
    return Promise.all([api.get("/routes", { query: { collectorId } }), api.get("/sources"), api.get("/pipelines")]).then(([r, sources, pipelines]) => {
      const name = (list: { id: string; name: string }[], key: string) => list.find((x) => x.id === key)?.name ?? key;
      return new Map(r.items.map((route) => [route.id, `${name(sources.items, route.sourceId)} → ${name(pipelines.items, route.pipelineId)}`]));
    });
  }, `${collectorId}|${reload}`);
  const latest = current.data;
  const history = past.data;
  const routes = named.data ?? new Map<string, string>();
  const error = current.error ?? past.error ?? named.error;

  const measured = history !== null && history.times.length > 0;

  return (
    <section className="detail-block" aria-labelledby="throughput-title">
      <h2 id="throughput-title">Throughput</h2>
      <ErrorMessage error={error} />
      <p className="muted" aria-live="polite">
        {latest === null
          ? error
            ? ""
            : "Loading…"
          : latest.lastReportAt === null
            ? "No metrics received from this collector yet."
            : latest.window === 0
              ? "One report received; rates appear after the next."
              : `Charts: the last hour in ${history?.step ?? 15} s buckets. Tables: rates over the last ${Math.round(latest.window)} s, updated every ${POLL_MS / 1000} s.`}
        {latest?.lastReportAt && (
          <>
            {" "}
            Last report <LastSeen at={latest.lastReportAt} />.
          </>
        )}
      </p>
      {latest && latest.lastReportAt !== null && (
        <>
          <ProcessFacts process={latest.process} />
          {measured && <HistoryCharts history={history} />}
          <Topology throughput={latest} reload={reload} />
          {latest.components.length > 0 && (
            <ListTable
              caption={{ id: "components-caption", text: "Components", visible: true }}
              columns={["Component", "Kind", "Signal", "In", "Out", "Errors"]}
              numeric={[3, 4, 5]}
            >
              {latest.components.map((c) => (
                <tr key={`${c.kind}:${c.id}:${c.signal}`}>
                  <th scope="row">
                    <code>{c.id}</code>
                  </th>
                  <td>{c.kind}</td>
                  <td>{c.signal}</td>
                  <td className="num">{rate(c.in)}</td>
                  <td className="num">{rate(c.out)}</td>
                  <td className="num">{rate(c.errors)}</td>
                </tr>
              ))}
            </ListTable>
          )}
          {latest.routes.length > 0 && (
            <ListTable caption={{ id: "route-rates-caption", text: "Routes", visible: true }} columns={["Route", "Input", "Output"]} numeric={[1, 2]}>
              {latest.routes.map((r) => (
                <tr key={r.routeId}>
                  <th scope="row">{routes.get(r.routeId) ?? <code>{r.routeId}</code>}</th>
                  <td className="num">{rate(r.in)}</td>
                  <td className="num">{rate(r.out)}</td>
                </tr>
              ))}
            </ListTable>
          )}
        </>
      )}
    </section>
  );
}

function ProcessFacts({ process }: { process: Throughput["process"] }) {
  const none = <span className="muted">—</span>;
  return (
    <dl className="process-facts">
      <div>
        <dt>CPU</dt>
        <dd>{process.cpu === null ? none : `${(process.cpu * 100).toFixed(1)} %`}</dd>
      </div>
      <div>
        <dt>Memory</dt>
        <dd>{process.memoryRss === null ? none : formatBytes(process.memoryRss)}</dd>
      </div>
      <div>
        <dt>Uptime</dt>
        <dd>{process.uptime === null ? none : formatDuration(process.uptime)}</dd>
      </div>
    </dl>
  );
}
