/**
 * The collector's own rendered topology: one row per flow it runs (a pipeline
 * joined to a source, by a route or by matchers), drawn source → processors →
 * destinations from the pipeline's graph, with the live rates of the latest
 * /throughput answer on each node and on the flow. A node whose error count
 * rose within the rates' window (errors/s above zero) is marked.
 */
import { api } from "../client.ts";
import { useLoad } from "../load.ts";
import { formatRate } from "../format.ts";
import type { Topology as Graph, TopologyNode } from "../../../shared/config-records.ts";
import type { Throughput } from "./types.ts";
import { ident, matchComponent, processorChain, processorName, type Rates } from "./TopologyModel.ts";
import "./Topology.css";

interface Named {
  id: string;
  name: string;
}
interface PipelineItem extends Named {
  signal: string;
  topology: Graph;
}
interface Records {
  pipelines: Map<string, PipelineItem>;
  sources: Map<string, Named>;
  destinations: Map<string, Named>;
}

const byId = <T extends Named>(items: T[]) => new Map(items.map((x) => [x.id, x]));

export function Topology({ throughput, reload }: { throughput: Throughput; reload: number }) {
  const { data: records } = useLoad(
    (): Promise<Records> =>
      Promise.all([api.get("/pipelines"), api.get("/sources"), api.get("/destinations")]).then(([p, s, d]) => ({
        pipelines: byId(p.items),
        sources: byId(s.items),
        destinations: byId(d.items),
      })),
    String(reload),
    { clearOnError: true },
  );

  if (throughput.pipelines.length === 0 || records === null) return null;
  return (
    <section className="topology" aria-labelledby="topology-title">
      <h3 id="topology-title">Topology</h3>
      <p className="muted">The flows this collector runs, with the latest rates (records/s in → out; errors/s). A node whose errors rise is marked.</p>
      <ol className="topology-flows">
        {throughput.pipelines.map((flow) => {
          const pipeline = records.pipelines.get(flow.pipelineId);
          const source = records.sources.get(flow.sourceId);
          return (
            <li
              key={`${flow.pipelineId}:${flow.sourceId}`}
              className="topology-flow"
              aria-label={`${source?.name ?? flow.sourceId} → ${pipeline?.name ?? flow.pipelineId}`}
            >
              <div className="topology-flow-head">
                <strong>{pipeline?.name ?? flow.pipelineId}</strong> <span className="muted">{flow.via === "route" ? "via route" : "via matchers"}</span>{" "}
                <span className="topology-rate">
                  {rate(flow.in)} in → {rate(flow.out)} out
                </span>
              </div>
              <FlowNodes pipeline={pipeline} source={source} records={records} throughput={throughput} />
            </li>
          );
        })}
      </ol>
    </section>
  );
}

const rate = (v: number | null | undefined) => (v === null || v === undefined ? "—" : formatRate(v));

function FlowNodes(props: { pipeline?: PipelineItem; source?: Named; records: Records; throughput: Throughput }) {
  const { pipeline, source, records, throughput } = props;
  if (!pipeline) return null;
  const signal = pipeline.signal;
  const find = (kind: "receiver" | "processor" | "exporter", name: string) => matchComponent(throughput.components, kind, signal, name);

  const destinations = pipeline.topology.nodes
    .filter((n) => n.kind === "destination")
    .flatMap((n) => (n.ref ? [records.destinations.get(n.ref)].filter((d): d is Named => d !== undefined) : [{ id: n.id, name: "active destinations" }]));
  return (
    <ol className="topology-nodes">
      <Node kind="source" label={source?.name ?? "source"} rates={source ? find("receiver", ident(source.name)) : undefined} />
      {processorChain(pipeline.topology).map((node: TopologyNode) => (
        <Node
          key={node.id}
          kind="processor"
          label={node.processor?.type ?? node.id}
          rates={source && find("processor", processorName(pipeline.name, source.name, node.id))}
        />
      ))}
      {destinations.map((d) => (
        <Node key={d.id} kind="destination" label={d.name} rates={find("exporter", ident(d.name))} />
      ))}
    </ol>
  );
}

function Node({ kind, label, rates }: { kind: string; label: string; rates?: Rates }) {
  const marked = rates !== undefined && rates.errors !== null && rates.errors > 0;
  return (
    <li className={`topology-node topology-${kind}${marked ? " topology-alert" : ""}`}>
      <span className="muted topology-kind">{kind}</span> <span className="topology-label">{label}</span>
      {rates && (
        <span className="topology-rate">
          {rate(rates.in)} → {rate(rates.out)}
          {marked && <> · {rate(rates.errors)} errors</>}
        </span>
      )}
      {marked && <span className="topology-mark">errors rising</span>}
    </li>
  );
}
