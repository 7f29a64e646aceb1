/**
 * Live throughput of one collector. The API answers rates averaged over its
 * recent reports, not a history, so the page polls every few seconds while
 * it is visible and keeps the last few minutes of answers as the charts'
 * time axis. Tables under the charts give the latest figures as text.
 */
import { useEffect, useMemo, useState } from "react";
import { api, ApiError } from "../api.ts";
import { Chart, type ChartSeries } from "../components/Chart.tsx";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { LastSeen } from "../components/LastSeen.tsx";
import { ListTable } from "../components/ListTable.tsx";
import { formatBytes, formatDuration, formatRate } from "../format.ts";
import type { Component, RouteRecord, Throughput } from "./types.ts";

const POLL_MS = 5000;
/** Five minutes of samples. */
const KEEP = 60;
const SPAN = (KEEP * POLL_MS) / 1000;

interface Sample {
  t: number;
  data: Throughput;
}

/** Fetches `load` now and every POLL_MS while the tab is visible; `reload` forces an immediate fetch. */
function useVisiblePolling(load: () => void, reload: number) {
  useEffect(() => {
    let timer: ReturnType<typeof setInterval> | null = null;
    const start = () => {
      if (timer !== null || document.visibilityState !== "visible") return;
      load();
      timer = setInterval(load, POLL_MS);
    };
    const stop = () => {
      if (timer !== null) clearInterval(timer);
      timer = null;
    };
    const onVisibility = () => (document.visibilityState === "visible" ? start() : stop());
    start();
    document.addEventListener("visibilitychange", onVisibility);
    return () => {
      stop();
      document.removeEventListener("visibilitychange", onVisibility);
    };
    // load is rebuilt each render but only reads stable setters and the id.
  }, [reload]);
}

/** One chart series per key, aligned on the samples' times. */
function seriesOf(samples: Sample[], pick: (data: Throughput) => Map<string, number | null>): ChartSeries[] {
  const perSample = samples.map((s) => pick(s.data));
  const labels = [...new Set(perSample.flatMap((m) => [...m.keys()]))];
  return labels.map((label) => ({ label, values: perSample.map((m) => m.get(label) ?? null) }));
}

const rate = (value: number | null) => (value === null ? <span className="muted">—</span> : formatRate(value));

export function ThroughputSection({ collectorId, reload }: { collectorId: string; reload: number }) {
  const [samples, setSamples] = useState<Sample[]>([]);
  const [error, setError] = useState<ApiError | null>(null);
  const [routes, setRoutes] = useState<Map<string, string>>(new Map());

  useVisiblePolling(() => {
    api.get<Throughput>(`/collectors/${encodeURIComponent(collectorId)}/throughput`).then(
      (data) => {
        setError(null);
        setSamples((before) => [...before, { t: Date.now() / 1000, data }].slice(-KEEP));
      },
      setError,
    );
  }, reload);

  // Routes by id, named "source → pipeline", for the per-route chart.
  useEffect(() => {
    const id = encodeURIComponent(collectorId);
    Promise.all([
      api.get<{ items: RouteRecord[] }>(`/routes?collectorId=${id}`),
      api.get<{ items: Component[] }>("/sources"),
      api.get<{ items: { id: string; name: string }[] }>("/pipelines"),
    ]).then(([r, sources, pipelines]) => {
      const name = (list: { id: string; name: string }[], key: string) => list.find((x) => x.id === key)?.name ?? key;
      setRoutes(new Map(r.items.map((route) => [route.id, `${name(sources.items, route.sourceId)} → ${name(pipelines.items, route.pipelineId)}`])));
    }, setError);
  }, [collectorId, reload]);

  const latest = samples[samples.length - 1]?.data ?? null;
  const times = useMemo(() => samples.map((s) => s.t), [samples]);
  const records = useMemo(
    () => seriesOf(samples, (d) => new Map(d.components.map((c) => [`${c.id} (${c.kind})`, c.out ?? c.in]))),
    [samples],
  );
  const errors = useMemo(
    () => seriesOf(samples, (d) => new Map(d.components.filter((c) => c.errors !== null).map((c) => [`${c.id} (${c.kind})`, c.errors]))),
    [samples],
  );
  const routeRates = useMemo(
    () =>
      seriesOf(samples, (d) => {
        const m = new Map<string, number | null>();
        for (const r of d.routes) {
          const name = routes.get(r.routeId) ?? r.routeId;
          m.set(`${name} in`, r.in);
          m.set(`${name} out`, r.out);
        }
        return m;
      }),
    [samples, routes],
  );

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
              : `Rates over the last ${Math.round(latest.window)} s; updated every ${POLL_MS / 1000} s.`}
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
          <div className="chart-grid">
            {records.length > 0 && <Chart title="Records per second by component" times={times} series={records} format={formatRate} span={SPAN} />}
            {errors.length > 0 && <Chart title="Errors per second by component" times={times} series={errors} format={formatRate} span={SPAN} />}
            {routeRates.length > 0 && <Chart title="Input and output per route" times={times} series={routeRates} format={formatRate} span={SPAN} />}
          </div>
          {latest.components.length > 0 && (
            <ListTable caption={{ id: "components-caption", text: "Components", visible: true }} columns={["Component", "Kind", "Signal", "In", "Out", "Errors"]}>
              {latest.components.map((c) => (
                <tr key={`${c.kind}:${c.id}:${c.signal}`}>
                  <th scope="row">
                    <code>{c.id}</code>
                  </th>
                  <td>{c.kind}</td>
                  <td>{c.signal}</td>
                  <td>{rate(c.in)}</td>
                  <td>{rate(c.out)}</td>
                  <td>{rate(c.errors)}</td>
                </tr>
              ))}
            </ListTable>
          )}
          {latest.routes.length > 0 && (
            <ListTable caption={{ id: "route-rates-caption", text: "Routes", visible: true }} columns={["Route", "Input", "Output"]}>
              {latest.routes.map((r) => (
                <tr key={r.routeId}>
                  <th scope="row">{routes.get(r.routeId) ?? <code>{r.routeId}</code>}</th>
                  <td>{rate(r.in)}</td>
                  <td>{rate(r.out)}</td>
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
