/**
 * Keeps the editor honest about other people's saves. Every working-tree
 * event for this pipeline's file (and every reconnect of the live stream)
 * fetches the stored pipeline. When its graph is not the one the draft
 * started from: with no unsaved edits the draft is replaced at once; with
 * edits the editor shows a notice and the user picks (reload, or keep
 * editing, in which case the save carries the old base and the API answers
 * 409 stale_version instead of overwriting).
 */
import { useEffect, useMemo, useState } from "react";
import { topologyTag } from "../../../shared/topology-tag.ts";
import type { ApiError } from "../api.ts";
import { api } from "../client.ts";
import { useLiveEvents } from "../events.ts";
import type { PipelineRecord, Topology } from "./types.ts";

interface Draft {
  topology: Topology;
  dirty: boolean;
  saved(t: Topology): void;
  reset(t: Topology): void;
}

export interface RemoteState {
  /** The tag of the stored graph the draft is based on; a save sends it as ?base. */
  base: string;
  /** After our own save: the API's answer is the new base. */
  saved(answer: Topology): void;
  /** Someone else's version while it conflicts with unsaved edits and the user has not chosen yet. */
  conflict: PipelineRecord | null;
  /** The pipeline is gone from the working tree (deleted, or the pending changes discarded). */
  gone: boolean;
  /** Replace the draft with the stored version. */
  reload(): void;
  /** Hide the notice and keep the edits (the next save then meets the 409). */
  keepEditing(): void;
  /** Show the notice again, e.g. after a save was refused as stale. */
  remind(): void;
  /** Set when the draft was replaced without asking, for the status line. */
  reloaded: boolean;
}

/** The working-tree file of a pipeline (server/configstore/layout.ts). */
const fileOf = (id: string) => `pipelines/${id}.yaml`;

export function useRemoteVersion(id: string, initial: Topology, draft: Draft, onLatest: (pipeline: PipelineRecord) => void): RemoteState {
  const [base, setBase] = useState(() => topologyTag(initial));
  const [latest, setLatest] = useState<PipelineRecord | null>(null);
  const [dismissed, setDismissed] = useState<string | null>(null);
  const [gone, setGone] = useState(false);
  const [reloaded, setReloaded] = useState(false);

  useLiveEvents(["worktree"], (event) => {
    if (event.type !== "reconnected" && event.id !== fileOf(id)) return;
    api.get("/pipelines/{id}", { params: { id } }).then(
      (pipeline) => {
        setGone(false);
        setLatest(pipeline);
        onLatest(pipeline);
      },
      (caught: ApiError) => caught.status === 404 && setGone(true),
    );
  });

  const latestTag = useMemo(() => (latest ? topologyTag(latest.topology) : null), [latest]);
  const draftTag = useMemo(() => topologyTag(draft.topology), [draft.topology]);
  const { dirty, saved, reset } = draft;

  useEffect(() => {
    if (latest === null || latestTag === null || latestTag === base) return;
    if (latestTag === draftTag) {
      // The store has exactly our draft: our own save's event arriving before its answer.
      setBase(latestTag);
      saved(latest.topology);
    } else if (!dirty) {
      setBase(latestTag);
      reset(latest.topology);
      setReloaded(true);
    }
  }, [latest, latestTag, base, draftTag, dirty, saved, reset]);

  const stale = latest !== null && latestTag !== null && latestTag !== base && latestTag !== draftTag && dirty;
  return {
    base,
    saved(answer) {
      setBase(topologyTag(answer));
      // What we fetched before is older than our own save now; it must not be applied again.
      setLatest((before) => before && { ...before, topology: answer });
      setReloaded(false);
    },
    conflict: stale && dismissed !== latestTag ? latest : null,
    gone,
    reload() {
      if (latest === null || latestTag === null) return;
      setBase(latestTag);
      reset(latest.topology);
      setReloaded(true);
    },
    keepEditing: () => setDismissed(latestTag),
    remind: () => setDismissed(null),
    reloaded,
  };
}
