/**
 * A live time-series line chart (uPlot on a canvas). The canvas is hidden
 * from assistive technology; the legend beside it names each series with its
 * latest value as text, so the figure reads without the picture. Series
 * colours come from the legend's swatches (CSS light-dark() pairs), read at
 * every draw, so the lines follow the theme.
 */
import { useEffect, useId, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import "./Chart.css";

export interface ChartSeries {
  label: string;
  /** One value per time; null is a gap. */
  values: (number | null)[];
}

interface ChartProps {
  title: string;
  /** Seconds since the epoch, ascending. */
  times: number[];
  series: ChartSeries[];
  /** How a value reads, e.g. "12.5/s". */
  format: (value: number) => string;
  /** Seconds the time axis spans, ending at the newest point. */
  span: number;
}

const HEIGHT = 180;
/** Swatch classes in Chart.css; series beyond these reuse them in turn. */
const PALETTE = 6;

/** Indices of values with no measured neighbour. */
function isolated(values: (number | null | undefined)[]): number[] {
  const missing = (i: number) => values[i] === null || values[i] === undefined;
  return values.flatMap((_, i) => (!missing(i) && missing(i - 1) && missing(i + 1) ? [i] : []));
}

export function Chart({ title, times, series, format, span }: ChartProps) {
  const titleId = useId();
  const plotRef = useRef<HTMLDivElement>(null);
  const legendRef = useRef<HTMLUListElement>(null);
  const chart = useRef<uPlot | null>(null);
  const shape = series.map((s) => s.label).join("\n");

  /** The resolved colour of a swatch (or of the figure's text for axes). */
  const colour = (index: number | null) => {
    const el = index === null ? plotRef.current : legendRef.current?.children[index]?.querySelector(".chart-swatch");
    return el ? getComputedStyle(el).color : "gray";
  };

  // A new set of series needs a new plot; values alone are a setData.
  useEffect(() => {
    const host = plotRef.current;
    if (!host) return;
    const axis = { stroke: () => colour(null), grid: { stroke: () => colour(null), width: 0.25 }, ticks: { stroke: () => colour(null), width: 0.5 } };
    const plot = new uPlot(
      {
        width: Math.max(host.clientWidth, 200),
        height: HEIGHT,
        legend: { show: false },
        cursor: { show: false },
        scales: {
          // A fixed window ending at the newest point, so the axis reads the same from the first sample on.
          x: { time: true, range: (_u, _min, max) => [max - span, max] },
          y: { range: (_u, min, max) => [0, Math.max(max, min, 1) * 1.1] },
        },
        axes: [axis, { ...axis, size: 60, values: (_u, ticks) => ticks.map((t) => format(t)) }],
        series: [
          {},
          ...series.map((s, i) => ({
            label: s.label,
            stroke: () => colour(i),
            width: 2,
            spanGaps: false,
            // A value between gaps has no line to draw: it shows as a dot.
            points: { show: true, size: 5, fill: () => colour(i), filter: (u: uPlot, index: number) => isolated(u.data[index] as (number | null)[]) },
          })),
        ],
      },
      [times, ...series.map((s) => s.values)],
      host,
    );
    chart.current = plot;
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(host.clientWidth, 200), height: HEIGHT }));
    resize.observe(host);
    return () => {
      resize.disconnect();
      plot.destroy();
      chart.current = null;
    };
    // Rebuilt only when the series change; data updates go through setData below.
  }, [shape]);

  useEffect(() => {
    chart.current?.setData([times, ...series.map((s) => s.values)]);
  }, [times, series]);

  return (
    <figure className="chart" aria-labelledby={titleId}>
      <figcaption id={titleId} className="chart-title">
        {title}
      </figcaption>
      <div ref={plotRef} className="chart-plot" aria-hidden="true" />
      <ul ref={legendRef} className="chart-legend" aria-label={`${title}: latest values`}>
        {series.map((s, i) => {
          // The newest measured value: the last bucket may not be measured yet.
          const latest = s.values.findLast((v) => v !== null);
          return (
            <li key={s.label}>
              <span className={`chart-swatch chart-swatch-${i % PALETTE}`} aria-hidden="true">
                ■
              </span>
              <span className="chart-label">{s.label}</span>{" "}
              <span className="chart-value">{latest === null || latest === undefined ? "—" : format(latest)}</span>
            </li>
          );
        })}
      </ul>
    </figure>
  );
}
