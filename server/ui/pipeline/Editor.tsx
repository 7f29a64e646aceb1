/**
 * The pipeline editor: palette and canvas, the processor chain, the node
 * and edge lists, the problems the API finds (checked live through the
 * preview, and again on Save), the dry-run and the config preview, all on
 * one draft graph that is saved with PUT /pipelines/{id}/topology (closing
 * or reloading with unsaved changes asks first). Someone else's save reloads
 * the graph, or asks first when there are unsaved edits (live.ts). Viewers
 * get the same page without anything that writes. Under the problems, the
 * matchers that choose which collectors run the pipeline (Targeting.tsx,
 * saved on their own). A click on a node opens its settings beside the
 * canvas (NodePanel.tsx); a palette item pressed is added after the
 * selected node, or where its kind belongs, and wired in (graph.ts insertNode).
 */
import { ReactFlowProvider, useReactFlow } from "@xyflow/react";
import { useCallback, useEffect, useMemo, useState } from "react";
import type { ApiError } from "../api.ts";
import { api } from "../client.ts";
import { useAction } from "../action.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { Canvas } from "./Canvas.tsx";
import { paletteItems } from "./describe.ts";
import { useDraft } from "./draft.ts";
import { DryRun } from "./DryRun.tsx";
import { addNode, connect, insertNode, pinProblems, processorChain, removeEdges, removeNodes } from "./graph.ts";
import { GraphList } from "./GraphList.tsx";
import { autoLayout } from "./layout.ts";
import { LiveRatesPicker, useLiveRates } from "./LiveRates.tsx";
import { NodePanel } from "./NodePanel.tsx";
import { Palette } from "./Palette.tsx";
import { Preview } from "./Preview.tsx";
import { ProblemList } from "./ProblemList.tsx";
import { ProcessorChain } from "./ProcessorChain.tsx";
import { TargetingSection } from "./Targeting.tsx";
import { useRemoteVersion } from "./live.ts";
import type { EditorContext, PaletteItem, PipelineRecord, Topology } from "./types.ts";
import "./pipeline.css";

interface EditorProps {
  pipeline: PipelineRecord;
  ctx: EditorContext;
  canEdit: boolean;
  /** Each version of the pipeline fetched after someone saved it (its name may have changed too), or saved here with new matchers. */
  onLatest(pipeline: PipelineRecord): void;
}

export function Editor(props: EditorProps) {
  return (
    <ReactFlowProvider>
      <EditorBody {...props} />
    </ReactFlowProvider>
  );
}

function EditorBody({ pipeline, ctx, canEdit, onLatest }: EditorProps) {
  const draft = useDraft(pipeline.topology);
  const remote = useRemoteVersion(pipeline.id, pipeline.topology, draft, onLatest);
  const { topology, update } = draft;
  const { fitView } = useReactFlow();
  const [check, setCheck] = useState<{ error: ApiError | null; sent: Topology }>({ error: null, sent: topology });
  const { busy: saving, error: saveError, setError: setSaveError, run } = useAction();
  const [saved, setSaved] = useState(false);
  const [rateChoice, setRateChoice] = useState("all");
  const live = useLiveRates(pipeline.id, rateChoice);
  const problems = useMemo(() => pinProblems(check.error, check.sent), [check]);
  const items = useMemo(() => paletteItems(ctx), [ctx]);
  const itemsByKey = useMemo(() => new Map(Object.values(items).flatMap((list) => list.map((i) => [i.key, i] as const))), [items]);
  const order = processorChain(topology);
  const onChecked = useCallback((error: ApiError | null, sent: Topology) => setCheck({ error, sent }), []);

  // A reload or closed tab would lose the draft; the browser asks first.
  useEffect(() => {
    if (!draft.dirty) return;
    const warn = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener("beforeunload", warn);
    return () => window.removeEventListener("beforeunload", warn);
  }, [draft.dirty]);

  const drop = (item: PaletteItem, position: { x: number; y: number }) => update((t) => addNode(t, { ...item.node, position }, item.idBase).topology);
  // A click adds after the one selected node (or where its kind belongs), wired in, and opens its settings.
  const add = (item: PaletteItem) => {
    const added = insertNode(topology, item.node, item.idBase, draft.selectedNodes.length === 1 ? draft.selectedNodes[0] : undefined);
    update(() => added.topology);
    draft.select(added.id);
    // Nodes to its right may have moved on: keep the whole graph in view once the new card is measured.
    requestAnimationFrame(() => requestAnimationFrame(() => void fitView({ maxZoom: 1, duration: 150 })));
  };
  const open = draft.selectedNodes.length === 1 && draft.selectedEdges.length === 0 ? topology.nodes.find((n) => n.id === draft.selectedNodes[0]) : undefined;
  const onConnect = (source: string, target: string) => update((t) => connect(t, source, target));

  function save() {
    const sent = topology;
    run(
      () => api.put("/pipelines/{id}/topology", { params: { id: pipeline.id }, query: { base: remote.base }, body: sent }),
      (answer) => {
        draft.saved(answer);
        remote.saved(answer);
        setCheck({ error: null, sent: answer });
        setSaved(true);
      },
      (caught) => {
        setSaveError(caught);
        // Stale is not a problem of the graph: keep the pinned problems, offer the reload again.
        if (caught.code === "stale_version") remote.remind();
        else setCheck({ error: caught, sent });
      },
    );
  }

  function layout() {
    update(autoLayout);
    requestAnimationFrame(() => void fitView({ maxZoom: 1 }));
  }

  const selected = draft.selectedNodes.length + draft.selectedEdges.length;
  return (
    <>
      {canEdit && (
        <div className="editor-toolbar" aria-label="Graph actions" role="group">
          <button type="button" className="button primary" onClick={save} disabled={saving || !draft.dirty}>
            {saving ? "Saving…" : "Save"}
          </button>
          <button type="button" className="button" onClick={layout} disabled={topology.nodes.length === 0}>
            Auto-layout
          </button>
          <button
            type="button"
            className="button"
            disabled={selected === 0}
            onClick={() => update((t) => removeEdges(removeNodes(t, new Set(draft.selectedNodes)), new Set(draft.selectedEdges)))}
          >
            Delete selected{selected > 0 ? ` (${selected})` : ""}
          </button>
          <span role="status" aria-label="Save state" className="muted">
            {draft.dirty ? "Unsaved changes" : remote.reloaded ? "Reloaded: someone else saved this pipeline" : saved ? "Saved" : ""}
          </span>
        </div>
      )}
      {remote.gone && (
        <p className="note" role="alert">
          This pipeline was deleted (or its pending creation discarded) by someone else; saving it is no longer possible.
        </p>
      )}
      {canEdit && remote.conflict && (
        <div className="note editor-conflict" role="alert">
          <p>
            This pipeline was changed by someone else after you started editing. Reload their version (your unsaved edits are dropped), or keep editing (saving
            then fails until you reload).
          </p>
          <div className="editor-conflict-actions">
            <button
              type="button"
              className="button primary"
              onClick={() => {
                remote.reload();
                setSaveError(null);
              }}
            >
              Reload
            </button>
            <button type="button" className="button" onClick={() => remote.keepEditing()}>
              Keep editing
            </button>
          </div>
        </div>
      )}
      <ErrorMessage error={saveError} />
      <LiveRatesPicker choice={rateChoice} onChoice={setRateChoice} answer={live.answer} />
      <div className={`editor-workspace${canEdit ? "" : " read-only"}${open ? " with-panel" : ""}`}>
        {canEdit && <Palette items={items} onAdd={add} />}
        <Canvas
          flow={draft.flow}
          ctx={ctx}
          problems={problems}
          canEdit={canEdit}
          matched={(pipeline.matchers?.length ?? 0) > 0}
          items={itemsByKey}
          onNodesChange={draft.onNodesChange}
          onEdgesChange={draft.onEdgesChange}
          onConnect={onConnect}
          onDropItem={drop}
          rates={live.rates}
        />
        {open && <NodePanel node={open} ctx={ctx} problems={problems} canEdit={canEdit} update={update} onClose={() => draft.select(null)} />}
      </div>
      <ProblemList problems={problems} topology={topology} ctx={ctx} />
      <TargetingSection pipeline={pipeline} canEdit={canEdit} onSaved={onLatest} />
      <div className="editor-panels">
        <ProcessorChain topology={topology} ctx={ctx} problems={problems} canEdit={canEdit} update={update} />
        <GraphList
          topology={topology}
          ctx={ctx}
          problems={problems}
          canEdit={canEdit}
          onDeleteNode={(id) => update((t) => removeNodes(t, new Set([id])))}
          onDeleteEdge={(id) => update((t) => removeEdges(t, new Set([id])))}
          onConnect={onConnect}
        />
      </div>
      <div className="editor-panels">
        <DryRun pipelineId={pipeline.id} chain={"chain" in order ? order.chain : null} />
        <Preview pipelineId={pipeline.id} matchers={pipeline.matchers ?? []} topology={topology} onChecked={onChecked} />
      </div>
    </>
  );
}
