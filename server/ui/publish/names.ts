/**
 * Collector names for ids the rollout status gives bare: each id is looked
 * up once (GET /collectors/{id}) and remembered while the page is open; a
 * deleted collector simply keeps showing its id.
 */
import { useEffect, useRef, useState } from "react";
import { api } from "../client.ts";

export function useCollectorNames(ids: readonly string[]): ReadonlyMap<string, string> {
  const [names, setNames] = useState<ReadonlyMap<string, string>>(new Map());
  const asked = useRef(new Set<string>());
  const key = ids.join(",");
  useEffect(() => {
    const wanted = key === "" ? [] : key.split(",").filter((id) => !asked.current.has(id));
    if (wanted.length === 0) return;
    for (const id of wanted) asked.current.add(id);
    // Answers are kept even when the ids moved on meanwhile: they were asked once only.
    void Promise.allSettled(wanted.map((id) => api.get("/collectors/{id}", { params: { id } }))).then((answers) =>
      setNames((old) => {
        const next = new Map(old);
        for (const answer of answers) if (answer.status === "fulfilled") next.set(answer.value.id, answer.value.name);
        return next;
      }),
    );
  }, [key]);
  return names;
}
