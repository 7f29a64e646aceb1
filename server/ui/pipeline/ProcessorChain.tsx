/**
 * The processor chain: the pipeline's processors in the order records meet
 * them, each with its settings (a filter's OTTL conditions, one per line;
 * other processors in the form generated from their catalog schema, or as
 * JSON), Up/Down to reorder and Remove, which joins the
 * neighbours so the chain stays whole. "Add a filter" appends one from a
 * canned template (e.g. Drop Health Check Logs) or a custom OTTL condition.
 * The API checks every condition and config; its problems show under the
 * processor, or beside the form field they name.
 */
import { useEffect, useState, type FormEvent } from "react";
import { SchemaForm } from "../components/SchemaForm.tsx";
import { detailErrors, type FieldErrors, type PathDetail } from "../schema/errors.ts";
import { errorTarget, isRecord, type Schema } from "../schema/schema.ts";
import { nodeName, templatesFor } from "./describe.ts";
import { appendProcessor, bypassNode, filterConditions, processorChain, swapNodes, withFilterConditions } from "./graph.ts";
import { PinnedProblems } from "./GraphList.tsx";
import type { EditorContext, Problems, ProcessorSpec, Topology, TopologyNode } from "./types.ts";

interface ChainProps {
  topology: Topology;
  ctx: EditorContext;
  problems: Problems;
  canEdit: boolean;
  update: (edit: (t: Topology) => Topology) => void;
}

export function ProcessorChain({ topology, ctx, problems, canEdit, update }: ChainProps) {
  const order = processorChain(topology);
  const processors = "chain" in order ? order.chain : topology.nodes.filter((n) => n.kind === "processor");
  const linear = "chain" in order;
  const setProcessor = (id: string, processor: ProcessorSpec) => update((t) => ({ ...t, nodes: t.nodes.map((n) => (n.id === id ? { ...n, processor } : n)) }));

  return (
    <section className="detail-block chain" aria-labelledby="chain-title">
      <h2 id="chain-title">Processor chain</h2>
      {!linear && (
        <p className="note">
          The processors branch at node <code>{order.branchAt}</code>, so they form no single chain; connect them in a line on the canvas to reorder them here
          or to dry-run.
        </p>
      )}
      {processors.length === 0 ? (
        <p className="muted">No processors: records go from the sources to the destinations unchanged.</p>
      ) : (
        <ol className="chain-list" aria-label="Processors in order">
          {processors.map((node, i) => (
            <li key={node.id} className="chain-item">
              <div className="chain-head">
                <span className="chain-step" aria-hidden="true">
                  {i + 1}
                </span>
                <strong>{nodeName(node, ctx)}</strong>
                {canEdit && (
                  <span className="chain-actions">
                    {linear && (
                      <>
                        <button
                          type="button"
                          className="button small"
                          aria-label={`Move ${node.id} up`}
                          disabled={i === 0}
                          onClick={() => update((t) => swapNodes(t, node.id, processors[i - 1]!.id))}
                        >
                          Up
                        </button>
                        <button
                          type="button"
                          className="button small"
                          aria-label={`Move ${node.id} down`}
                          disabled={i === processors.length - 1}
                          onClick={() => update((t) => swapNodes(t, node.id, processors[i + 1]!.id))}
                        >
                          Down
                        </button>
                      </>
                    )}
                    <button type="button" className="button small" aria-label={`Remove ${node.id}`} onClick={() => update((t) => bypassNode(t, node.id))}>
                      Remove
                    </button>
                  </span>
                )}
              </div>
              <ProcessorSettings node={node} ctx={ctx} canEdit={canEdit} problems={problems} onChange={(p) => setProcessor(node.id, p)} />
            </li>
          ))}
        </ol>
      )}
      {canEdit && linear && (
        <AddFilter ctx={ctx} onAdd={(processor, idBase) => update((t) => appendProcessor(t, { kind: "processor", processor }, idBase, processors.at(-1)))} />
      )}
    </section>
  );
}

/**
 * A filter's conditions, one a line; any other processor's config as the
 * form its catalog schema calls for (with a switch to plain JSON). Viewers,
 * and types the catalog does not know, get the JSON. Problems the form shows
 * beside a field are not repeated under the processor.
 */
export function ProcessorSettings({
  node,
  ctx,
  canEdit,
  problems,
  onChange,
  inPanel = false,
}: {
  node: TopologyNode;
  ctx: EditorContext;
  canEdit: boolean;
  problems: Problems;
  onChange: (p: ProcessorSpec) => void;
  /** In the node panel beside the canvas: its own ids, and labels without the node's id (the panel names it). */
  inPanel?: boolean;
}) {
  const processor = node.processor ?? { type: "processor", config: {} };
  const schema = ctx.catalog.processors.find((p) => p.type === processor.type)?.schema as Schema | undefined;
  const [asJson, setAsJson] = useState(false);
  const messages = problems.nodes.get(node.id) ?? [];
  if (processor.type === "filter") {
    return (
      <>
        <FilterConditions node={node} processor={processor} ctx={ctx} canEdit={canEdit} onChange={onChange} inPanel={inPanel} />
        <PinnedProblems messages={messages} />
      </>
    );
  }
  const form = canEdit && schema !== undefined && !asJson;
  const { errors, shown } = form ? besideFields(problems.configs.get(node.id) ?? [], schema, node.id) : { errors: {}, shown: new Set<string>() };
  return (
    <>
      {canEdit && schema !== undefined && (
        <label className="chain-json-toggle">
          <input type="checkbox" checked={asJson} onChange={(e) => setAsJson(e.target.checked)} /> {inPanel ? "Edit as JSON" : `Edit ${node.id} as JSON`}
        </label>
      )}
      {form ? (
        <div className="chain-form">
          <SchemaForm
            schema={schema}
            value={processor.config ?? {}}
            onChange={(config) => onChange({ ...processor, config })}
            errors={errors}
            idPrefix={`${inPanel ? "panel" : "processor"}-${node.id}`}
            root="config"
          />
        </div>
      ) : (
        <JsonConfig node={node} processor={processor} canEdit={canEdit} onChange={onChange} inPanel={inPanel} />
      )}
      <PinnedProblems messages={messages.filter((m) => !shown.has(m))} />
    </>
  );
}

/** The config problems that land on a field the form renders, without the node prefix the list needs; `shown` holds their messages as pinned. */
function besideFields(details: PathDetail[], schema: Schema, nodeId: string): { errors: FieldErrors; shown: Set<string> } {
  const prefix = `node "${nodeId}": `;
  const rendered = details.filter((d) => {
    const target = errorTarget(schema, "config", d.path);
    const key = target?.slice("config.".length).split(/[.[]/)[0];
    return key !== undefined && schema.properties?.[key] !== undefined;
  });
  const local = rendered.map((d) => ({ path: d.path, message: d.message.startsWith(prefix) ? d.message.slice(prefix.length) : d.message }));
  return { errors: detailErrors(local, schema, "config"), shown: new Set(rendered.map((d) => d.message)) };
}

interface TextProps {
  node: TopologyNode;
  processor: ProcessorSpec;
  canEdit: boolean;
  onChange: (p: ProcessorSpec) => void;
  inPanel?: boolean;
}

/** Local text, so typing is never rewritten; it follows changes made elsewhere (a template, a reorder) unless it already says the same. */
function useSyncedText(shown: string, normalise: (text: string) => string | null) {
  const [text, setText] = useState(shown);
  useEffect(() => {
    setText((current) => (normalise(current) === shown ? current : shown));
  }, [shown]);
  return [text, setText] as const;
}

function FilterConditions({ node, processor, ctx, canEdit, onChange, inPanel }: TextProps & { ctx: EditorContext }) {
  const config = processor.config ?? {};
  const [text, setText] = useSyncedText(filterConditions(config, ctx.signal).join("\n"), (value) => lines(value).join("\n"));
  const id = `${inPanel ? "panel-" : ""}settings-${node.id}`;
  return (
    <div className="chain-settings">
      <label htmlFor={id}>{inPanel ? "Conditions" : `Conditions of ${node.id}`}</label>
      <textarea
        id={id}
        className="code-input"
        rows={Math.min(6, Math.max(2, text.split("\n").length))}
        spellCheck={false}
        readOnly={!canEdit}
        value={text}
        aria-describedby={`${id}-hint`}
        onChange={(e) => {
          setText(e.target.value);
          onChange({ ...processor, config: withFilterConditions(config, ctx.signal, lines(e.target.value)) });
        }}
      />
      <p id={`${id}-hint`} className="hint">
        One OTTL condition a line; a record matching any of them is dropped.
      </p>
    </div>
  );
}

function JsonConfig({ node, processor, canEdit, onChange, inPanel }: TextProps) {
  const [text, setText] = useSyncedText(JSON.stringify(processor.config ?? {}, null, 2), (value) => {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      return null;
    }
  });
  const [invalid, setInvalid] = useState<string | null>(null);
  function onText(value: string) {
    setText(value);
    try {
      const parsed: unknown = JSON.parse(value);
      if (!isRecord(parsed)) throw new Error("the config must be a JSON object");
      setInvalid(null);
      onChange({ ...processor, config: parsed });
    } catch (error) {
      setInvalid((error as Error).message);
    }
  }
  const id = `${inPanel ? "panel-" : ""}settings-${node.id}`;
  return (
    <div className="chain-settings">
      <label htmlFor={id}>{inPanel ? "Config (JSON)" : `Config of ${node.id} (JSON)`}</label>
      <textarea
        id={id}
        className="code-input"
        rows={4}
        spellCheck={false}
        readOnly={!canEdit}
        value={text}
        aria-describedby={`${id}-hint`}
        aria-invalid={invalid !== null}
        onChange={(e) => onText(e.target.value)}
      />
      <p id={`${id}-hint`} className="hint">
        {invalid ?? ""}
      </p>
    </div>
  );
}

function lines(text: string): string[] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
}

function AddFilter({ ctx, onAdd }: { ctx: EditorContext; onAdd: (processor: ProcessorSpec, idBase: string) => void }) {
  const templates = templatesFor(ctx);
  const [from, setFrom] = useState<"template" | "custom">(templates.length > 0 ? "template" : "custom");
  const [condition, setCondition] = useState("");
  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    if (from === "template") {
      const template = templates.find((t) => t.id === form.get("template"));
      if (template) onAdd(structuredClone(template.processor) as ProcessorSpec, template.id);
      return;
    }
    if (condition.trim() === "") return;
    onAdd({ type: "filter", config: withFilterConditions({ error_mode: "ignore" }, ctx.signal, [condition.trim()]) }, "filter");
    setCondition("");
  }
  return (
    <form className="filters add-filter" aria-label="Add a filter" onSubmit={onSubmit}>
      <fieldset className="add-filter-choice">
        <legend>Add a filter</legend>
        {templates.length > 0 && (
          <label>
            <input type="radio" name="from" value="template" checked={from === "template"} onChange={() => setFrom("template")} /> From a template
          </label>
        )}
        <label>
          <input type="radio" name="from" value="custom" checked={from === "custom"} onChange={() => setFrom("custom")} /> Custom OTTL condition
        </label>
      </fieldset>
      {from === "template" ? (
        <div className="field grow">
          <label htmlFor="add-filter-template">Template</label>
          <select id="add-filter-template" name="template">
            {templates.map((t) => (
              <option key={t.id} value={t.id}>
                {t.name}
              </option>
            ))}
          </select>
        </div>
      ) : (
        <div className="field grow">
          <label htmlFor="add-filter-condition">OTTL condition</label>
          <input
            id="add-filter-condition"
            className="code-input"
            value={condition}
            onChange={(e) => setCondition(e.target.value)}
            placeholder={'IsMatch(body, "debug")'}
            spellCheck={false}
            required
          />
        </div>
      )}
      <div className="filter-actions">
        <button type="submit" className="button">
          Add filter
        </button>
      </div>
    </form>
  );
}
