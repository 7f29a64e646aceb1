/**
 * The editor of one sensitive value (a header's value, a password): a
 * choice of how it is given (Secret, Plain text where the schema allows it,
 * From the collector's environment) and the control for that choice.
 *
 * A stored secret never reaches the browser: the form holds its read form
 * and shows "Set · changed 3 days ago" with Replace and Clear. Left alone,
 * the read form is what the page sends back, which keeps the stored value.
 * Replace opens a write-only box (password input, no autofill), Clear drops
 * the value (a header cleared is left out when saved); either can be undone
 * until the form is saved. A plain-text value named like a credential gets a
 * warning: plain text lands in git and in every read.
 */
import { useEffect, useRef, useState } from "react";
import { envNameProblem, looksLikeCredential, secretChangedAt, secretKindOf, switchSecretKind, type SecretKind } from "../schema/secrets.ts";
import type { Schema } from "../schema/schema.ts";
import { LastSeen } from "./LastSeen.tsx";

const KINDS: { kind: SecretKind; label: string }[] = [
  { kind: "secret", label: "Secret" },
  { kind: "plain", label: "Plain text" },
  { kind: "env", label: "From the collector's environment" },
];

export interface SecretFieldProps {
  /** DOM id of the value's control; notes and warnings hang off it. */
  id: string;
  /** The value's accessible name, e.g. "Headers 1 value" or "Password". */
  label: string;
  /** The sensitive leaf's schema (plainAllowed). */
  schema: Schema;
  value: unknown;
  /** The value the form was loaded with (a stored secret's read form), so Keep and Undo can bring it back. */
  stored: unknown;
  onChange: (value: unknown) => void;
  /** Whether a value must be given (a named header, a required field). */
  required: boolean;
  /** The header's name, for the credential warning. */
  name?: string;
  /** The ids of the field's own hint and errors. */
  describedBy?: string;
  invalid?: boolean;
}

export function SecretField({ id, label, schema, value, stored, onChange, required, name, describedBy, invalid }: SecretFieldProps) {
  const kind = secretKindOf(value);
  // Focus follows Replace, Clear, Keep and Undo (the button pressed goes away), never a fresh load.
  const [acted, setActed] = useState(false);
  const act = (next: unknown) => {
    setActed(true);
    onChange(next);
  };
  const kinds = KINDS.filter((k) => k.kind !== "plain" || schema.plainAllowed === true || kind === "plain");
  const warn = kind === "plain" && name !== undefined && looksLikeCredential(name);
  const noteId = `${id}-note`;
  const ids = (...more: (string | false)[]) => [describedBy, ...more].filter((x) => typeof x === "string" && x !== "").join(" ") || undefined;

  return (
    <div className="secret-field">
      <div className="secret-controls">
        <select aria-label={`${label} kind`} value={kind} onChange={(event) => onChange(switchSecretKind(event.target.value as SecretKind, value, stored))}>
          {kinds.map((k) => (
            <option key={k.kind} value={k.kind}>
              {k.label}
            </option>
          ))}
        </select>
        {kind === "secret" && (
          <SecretValue
            id={id}
            label={label}
            value={value}
            stored={stored}
            required={required}
            acted={acted}
            act={act}
            onChange={onChange}
            describedBy={ids()}
            invalid={invalid}
          />
        )}
        {kind === "plain" && (
          <input
            id={id}
            aria-label={label}
            value={(value as { value: string }).value}
            onChange={(event) => onChange({ value: event.target.value, secret: false })}
            required={required}
            aria-describedby={ids(warn && noteId)}
            aria-invalid={invalid || undefined}
          />
        )}
        {kind === "env" && (
          <EnvName
            id={id}
            label={label}
            name={(value as { env: string }).env}
            onChange={(env) => onChange({ env })}
            describedBy={ids(noteId)}
            invalid={invalid}
          />
        )}
      </div>
      {warn && (
        <p id={noteId} className="secret-warning">
          “{name}” looks like a credential. As plain text it is kept in git history and shown to everyone who can read the configuration; choose Secret to keep
          it write-only.
        </p>
      )}
    </div>
  );
}

interface SecretValueProps {
  id: string;
  label: string;
  value: unknown;
  stored: unknown;
  required: boolean;
  acted: boolean;
  act: (value: unknown) => void;
  onChange: (value: unknown) => void;
  describedBy?: string;
  invalid?: boolean;
}

/** A Secret: the stored one (set, when, Replace, Clear), a write-only box for a new one, or cleared (Undo). */
function SecretValue({ id, label, value, stored, required, acted, act, onChange, describedBy, invalid }: SecretValueProps) {
  const changedAt = secretChangedAt(value);
  if (changedAt !== null || (value !== undefined && typeof value !== "string")) {
    return (
      <>
        <span id={id} className="secret-set">
          Set
          {changedAt !== null && (
            <>
              {" · changed "}
              <LastSeen at={changedAt} />
            </>
          )}
        </span>
        <button type="button" className="button" aria-label={`Replace ${label}`} autoFocus={acted} onClick={() => act("")}>
          Replace
        </button>
        <button type="button" className="button ghost" aria-label={`Clear ${label}`} onClick={() => act(undefined)}>
          Clear
        </button>
      </>
    );
  }
  if (value === undefined && stored !== undefined) {
    return (
      <>
        <span id={id} className="secret-set">
          Cleared: saving removes it.
        </span>
        <button type="button" className="button" aria-label={`Undo clearing ${label}`} autoFocus={acted} onClick={() => act(stored)}>
          Undo
        </button>
      </>
    );
  }
  const replacing = stored !== undefined;
  return (
    <>
      <input
        id={id}
        type="password"
        aria-label={label}
        // A new value, never a saved login: no autofill, no password manager prompt.
        autoComplete="new-password"
        spellCheck={false}
        placeholder={replacing ? "new value" : "value"}
        value={typeof value === "string" ? value : ""}
        // Emptied with nothing stored: no value rather than an empty secret.
        onChange={(event) => onChange(event.target.value === "" && !replacing ? undefined : event.target.value)}
        required={required || replacing}
        autoFocus={acted}
        aria-describedby={describedBy}
        aria-invalid={invalid || undefined}
      />
      {replacing && (
        <button type="button" className="button ghost" aria-label={`Keep current ${label}`} onClick={() => act(stored)}>
          Keep current
        </button>
      )}
    </>
  );
}

/** The environment variable's name, checked as the collector's env provider checks it (the browser will not submit a bad one). */
function EnvName({
  id,
  label,
  name,
  onChange,
  describedBy,
  invalid,
}: {
  id: string;
  label: string;
  name: string;
  onChange: (name: string) => void;
  describedBy?: string;
  invalid?: boolean;
}) {
  const input = useRef<HTMLInputElement>(null);
  const problem = envNameProblem(name);
  useEffect(() => input.current?.setCustomValidity(problem ?? ""), [problem]);
  return (
    <>
      <input
        ref={input}
        id={id}
        aria-label={`${label}: environment variable`}
        placeholder="NAME"
        spellCheck={false}
        autoCapitalize="off"
        value={name}
        onChange={(event) => onChange(event.target.value)}
        required
        aria-describedby={describedBy}
        aria-invalid={invalid || (name !== "" && problem !== null) || undefined}
      />
      <p id={`${id}-note`} className="hint secret-env-note">
        {name !== "" && problem !== null ? problem : "Read from the collector host's environment when the collector loads its configuration."}
      </p>
    </>
  );
}
