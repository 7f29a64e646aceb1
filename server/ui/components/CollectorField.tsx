/**
 * An input where a person types a collector: its name or its id, both of
 * which the API reads (server/refs/refs.ts). While they type it suggests the
 * collectors whose name, id or environment holds the text; when the server
 * refuses a name several collectors share (409 ambiguous_name), each of them
 * is offered as a choice that puts its id in the field.
 */
import { useState } from "react";
import type { ApiError } from "../api.ts";
import { api } from "../client.ts";
import { useLoad } from "../load.ts";
import "./CollectorField.css";

interface Candidate {
  id: string;
  name: string;
}

interface Props {
  /** The input's id (its label's htmlFor) and form field name. */
  id: string;
  name: string;
  /** The last answer of the form's call: an ambiguous_name refusal becomes choices. */
  error: ApiError | null;
  required?: boolean;
  placeholder?: string;
  "aria-describedby"?: string;
}

/** The collectors an ambiguous_name refusal lists. */
function candidatesOf(error: ApiError | null): Candidate[] {
  if (error?.code !== "ambiguous_name") return [];
  return error.details.filter(
    (d): d is Candidate => typeof d === "object" && d !== null && typeof (d as Candidate).id === "string" && typeof (d as Candidate).name === "string",
  );
}

export function CollectorField({ id, name, error, required, placeholder = "name or id", ...aria }: Props) {
  const [value, setValue] = useState("");
  const q = value.trim();
  const suggested = useLoad(q.length < 2 ? null : () => api.get("/collectors", { query: { limit: 20, q } }), q, { clearOnError: true });
  const matches = suggested.data?.items ?? [];
  const candidates = candidatesOf(error);

  // A name shown once among the suggestions is offered as the name; a shared one as each collector's id.
  const shared = new Set(matches.filter((c, i) => matches.findIndex((o) => o.name === c.name) !== i).map((c) => c.name));
  return (
    <>
      <input
        id={id}
        name={name}
        list={`${id}-options`}
        autoComplete="off"
        spellCheck={false}
        required={required}
        placeholder={placeholder}
        value={value}
        onChange={(event) => setValue(event.currentTarget.value)}
        {...aria}
      />
      <datalist id={`${id}-options`}>
        {matches.map((c) => (
          <option key={c.id} value={shared.has(c.name) ? c.id : c.name}>
            {shared.has(c.name) ? c.name : c.id}
          </option>
        ))}
      </datalist>
      {candidates.length > 0 && (
        <div className="collector-choices" role="group" aria-label="Collectors with this name">
          <span>Which one?</span>
          {candidates.map((c) => (
            <button key={c.id} type="button" className="button ghost" aria-pressed={value === c.id} onClick={() => setValue(c.id)}>
              {c.name} <code>{c.id}</code>
            </button>
          ))}
        </div>
      )}
    </>
  );
}
