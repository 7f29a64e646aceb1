/**
 * A form generated from a JSON Schema (the catalog's per-type config
 * schemas, or a page's own), so a new catalog type needs no UI change. Each
 * property gets the editor its shape calls for (text, number, checkbox,
 * select, a list or key/value editor, a fieldset for a nested object, rows
 * of fieldsets for a list of objects, a write-only editor for a sensitive
 * field or a map of them such as headers: SecretField.tsx), with
 * its description as a hint, a mark when required, and the API's error for
 * its path beside it (aria-invalid, aria-describedby). What it cannot render
 * is a JSON box for that key, so nothing is uneditable. Controlled: the page
 * owns the value and the submit.
 */
import { useState, type ChangeEvent, type ReactNode } from "react";
import type { FieldErrors } from "../schema/errors.ts";
import {
  childPath,
  choices,
  fieldId,
  fieldKind,
  initialValue,
  isRecord,
  itemPath,
  labelOf,
  mapValues,
  type ConfigValue,
  type Schema,
} from "../schema/schema.ts";
import { storedSecret } from "../schema/secrets.ts";
import { SecretField } from "./SecretField.tsx";
import "./SchemaForm.css";

interface FormProps {
  /** An object schema; its properties become the fields. */
  schema: Schema;
  value: ConfigValue;
  onChange: (value: ConfigValue) => void;
  /** Messages per field path, from fieldErrors(). */
  errors: FieldErrors;
  /** Prefix of the fields' DOM ids; unique per form on the page. */
  idPrefix: string;
  /** The API path of `value` (e.g. "config"), so error paths line up; "" for a whole request body. */
  root?: string;
}

export function SchemaForm({ schema, value, onChange, errors, idPrefix, root = "" }: FormProps) {
  return <Properties schema={schema} value={value} onChange={onChange} errors={errors} idPrefix={idPrefix} path={root} />;
}

interface PropertiesProps {
  schema: Schema;
  value: ConfigValue;
  onChange: (value: ConfigValue) => void;
  errors: FieldErrors;
  idPrefix: string;
  path: string;
}

function Properties({ schema, value, onChange, errors, idPrefix, path }: PropertiesProps) {
  const set = (key: string, next: unknown) => {
    const copy = { ...value };
    if (next === undefined) delete copy[key];
    else copy[key] = next;
    onChange(copy);
  };
  return (
    <>
      {Object.entries(schema.properties ?? {}).map(([key, property]) => (
        <Field
          key={key}
          name={key}
          schema={property}
          required={schema.required?.includes(key) ?? false}
          value={value[key]}
          onChange={(next) => set(key, next)}
          errors={errors}
          idPrefix={idPrefix}
          path={childPath(path, key)}
        />
      ))}
    </>
  );
}

interface FieldProps {
  name: string;
  schema: Schema;
  required: boolean;
  value: unknown;
  onChange: (value: unknown) => void;
  errors: FieldErrors;
  idPrefix: string;
  path: string;
}

/** The ids and attributes that tie a control to its hint and its errors. */
function described(id: string, schema: Schema, messages: string[]) {
  const ids = [schema.description ? `${id}-hint` : "", messages.length > 0 ? `${id}-error` : ""].filter((x) => x !== "");
  return {
    "aria-describedby": ids.length > 0 ? ids.join(" ") : undefined,
    "aria-invalid": messages.length > 0 ? true : undefined,
  } as const;
}

function Hint({ id, schema }: { id: string; schema: Schema }) {
  if (!schema.description) return null;
  return (
    <span id={`${id}-hint`} className="hint">
      {schema.description}
    </span>
  );
}

function FieldMessages({ id, messages }: { id: string; messages: string[] }) {
  if (messages.length === 0) return null;
  return (
    <ul id={`${id}-error`} className="schema-error">
      {messages.map((message, i) => (
        <li key={i}>{message}</li>
      ))}
    </ul>
  );
}

function RequiredMark({ required }: { required: boolean }) {
  return required ? (
    <span className="required-mark" aria-hidden="true">
      {" "}
      *
    </span>
  ) : null;
}

/** A labelled single control with its hint and errors. */
function Labelled({
  id,
  label,
  required,
  schema,
  messages,
  children,
}: {
  id: string;
  label: string;
  required: boolean;
  schema: Schema;
  messages: string[];
  children: ReactNode;
}) {
  return (
    <div className="schema-field">
      <label htmlFor={id}>
        {label}
        <RequiredMark required={required} />
      </label>
      {children}
      <Hint id={id} schema={schema} />
      <FieldMessages id={id} messages={messages} />
    </div>
  );
}

/** A group of controls (list, map, checkboxes, nested object) under a legend. */
function Group({
  id,
  label,
  required,
  schema,
  messages,
  children,
}: {
  id: string;
  label: string;
  required: boolean;
  schema: Schema;
  messages: string[];
  children: ReactNode;
}) {
  const describedBy = described(id, schema, messages)["aria-describedby"];
  return (
    <fieldset id={id} className="schema-group" aria-describedby={describedBy}>
      <legend>
        {label}
        <RequiredMark required={required} />
      </legend>
      <Hint id={id} schema={schema} />
      <FieldMessages id={id} messages={messages} />
      {children}
    </fieldset>
  );
}

function Field({ name, schema, required, value, onChange, errors, idPrefix, path }: FieldProps) {
  const id = fieldId(idPrefix, path);
  const label = labelOf(name, schema);
  const messages = errors[path] ?? [];
  const aria = described(id, schema, messages);
  const common = { id, label, required, schema, messages };
  const text = (event: ChangeEvent<HTMLInputElement | HTMLSelectElement>) => onChange(event.target.value === "" ? undefined : event.target.value);

  switch (fieldKind(schema)) {
    case "string":
    case "scalar":
      return (
        <Labelled {...common}>
          <input
            id={id}
            value={typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? String(value) : ""}
            onChange={text}
            required={required}
            {...aria}
          />
        </Labelled>
      );
    case "number":
    case "integer":
      return (
        <Labelled {...common}>
          <input
            id={id}
            type="number"
            step={schema.type === "integer" ? 1 : "any"}
            min={schema.minimum}
            max={schema.maximum}
            value={typeof value === "number" ? value : ""}
            onChange={(event) => onChange(event.target.value === "" ? undefined : Number(event.target.value))}
            required={required}
            {...aria}
          />
        </Labelled>
      );
    case "boolean":
      return (
        <div className="schema-field schema-checkbox">
          <label>
            <input type="checkbox" id={id} checked={value === true} onChange={(event) => onChange(event.target.checked)} {...aria} /> {label}
          </label>
          <Hint id={id} schema={schema} />
          <FieldMessages id={id} messages={messages} />
        </div>
      );
    case "choice": {
      const options = choices(schema)!;
      return (
        <Labelled {...common}>
          <select id={id} value={typeof value === "string" ? value : ""} onChange={text} required={required} {...aria}>
            {(value === undefined || !required) && <option value="">{required ? "Choose…" : "(not set)"}</option>}
            {options.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </select>
        </Labelled>
      );
    }
    case "choiceList": {
      const options = choices(schema.items!)!;
      const selected = Array.isArray(value) ? (value as string[]) : [];
      const toggle = (option: string, on: boolean) => onChange(options.map((o) => o.value).filter((v) => (v === option ? on : selected.includes(v))));
      return (
        <Group {...common}>
          <div className="schema-choices">
            {options.map((option) => (
              <label key={option.value}>
                <input type="checkbox" checked={selected.includes(option.value)} onChange={(event) => toggle(option.value, event.target.checked)} {...aria} />{" "}
                {option.label}
              </label>
            ))}
          </div>
        </Group>
      );
    }
    case "stringList":
      return (
        <Group {...common}>
          <StringList id={id} label={label} value={Array.isArray(value) ? (value as string[]) : []} onChange={onChange} aria={aria} />
        </Group>
      );
    case "stringMap":
      return (
        <Group {...common}>
          <StringMap id={id} label={label} value={isRecord(value) ? (value as Record<string, string>) : {}} onChange={onChange} aria={aria} />
        </Group>
      );
    case "secret":
      return (
        <Group {...common}>
          <StoredSecretField id={`${id}-value`} label={label} schema={schema} value={value} onChange={onChange} required={required} aria={aria} />
        </Group>
      );
    case "secretMap":
      return (
        <Group {...common}>
          <SecretMap id={id} label={label} schema={mapValues(schema)!} value={isRecord(value) ? value : {}} onChange={onChange} aria={aria} />
        </Group>
      );
    case "objectList":
      return (
        <Group {...common}>
          <ObjectList
            label={label}
            schema={schema.items!}
            value={Array.isArray(value) ? value : []}
            onChange={onChange}
            errors={errors}
            idPrefix={idPrefix}
            path={path}
          />
        </Group>
      );
    case "object":
      return (
        <Group {...common}>
          <Properties schema={schema} value={isRecord(value) ? value : {}} onChange={onChange} errors={errors} idPrefix={idPrefix} path={path} />
        </Group>
      );
    case "json":
      return <JsonField {...common} value={value} onChange={onChange} />;
  }
}

type Aria = ReturnType<typeof described>;

/** One text box per item, each removable, and an Add button. */
function StringList({ id, label, value, onChange, aria }: { id: string; label: string; value: string[]; onChange: (value: unknown) => void; aria: Aria }) {
  const setItem = (index: number, text: string) => onChange(value.map((item, i) => (i === index ? text : item)));
  return (
    <>
      {value.length === 0 && <p className="hint">No items.</p>}
      <ol className="schema-list">
        {value.map((item, i) => (
          <li key={i}>
            <input
              id={i === 0 ? `${id}-0` : undefined}
              aria-label={`${label} ${i + 1}`}
              value={item}
              onChange={(event) => setItem(i, event.target.value)}
              {...aria}
            />
            <button type="button" className="button ghost" aria-label={`Remove ${label} ${i + 1}`} onClick={() => onChange(value.filter((_, j) => j !== i))}>
              Remove
            </button>
          </li>
        ))}
      </ol>
      <button type="button" className="button" onClick={() => onChange([...value, ""])}>
        Add {label.toLowerCase()}
      </button>
    </>
  );
}

/**
 * A list of objects (e.g. attribute actions): each item a numbered fieldset
 * of its own fields, removable, and an Add button for an item of the
 * defaults. Errors for an item (`actions[1]`) show on its fieldset.
 */
function ObjectList({
  label,
  schema,
  value,
  onChange,
  errors,
  idPrefix,
  path,
}: {
  label: string;
  schema: Schema;
  value: unknown[];
  onChange: (value: unknown) => void;
  errors: FieldErrors;
  idPrefix: string;
  path: string;
}) {
  const setItem = (index: number, item: ConfigValue) => onChange(value.map((v, i) => (i === index ? item : v)));
  return (
    <>
      {value.length === 0 && <p className="hint">No items.</p>}
      <ol className="schema-list schema-rows">
        {value.map((item, i) => {
          const at = itemPath(path, i);
          return (
            <li key={i}>
              <Group id={fieldId(idPrefix, at)} label={`${label} ${i + 1}`} required={false} schema={{}} messages={errors[at] ?? []}>
                <Properties
                  schema={schema}
                  value={isRecord(item) ? item : {}}
                  onChange={(next) => setItem(i, next)}
                  errors={errors}
                  idPrefix={idPrefix}
                  path={at}
                />
                <button
                  type="button"
                  className="button ghost"
                  aria-label={`Remove ${label} ${i + 1}`}
                  onClick={() => onChange(value.filter((_, j) => j !== i))}
                >
                  Remove
                </button>
              </Group>
            </li>
          );
        })}
      </ol>
      <button type="button" className="button" onClick={() => onChange([...value, initialValue(schema)])}>
        Add {label.toLowerCase()}
      </button>
    </>
  );
}

interface Row {
  key: string;
  value: string;
}

/**
 * Key/value rows (e.g. headers). The rows are local so renaming a key while
 * typing keeps its place; the value sent up drops rows without a key.
 */
function StringMap({
  id,
  label,
  value,
  onChange,
  aria,
}: {
  id: string;
  label: string;
  value: Record<string, string>;
  onChange: (value: unknown) => void;
  aria: Aria;
}) {
  const [rows, setRows] = useState<Row[]>(() => Object.entries(value).map(([key, v]) => ({ key, value: String(v) })));
  const update = (next: Row[]) => {
    setRows(next);
    onChange(Object.fromEntries(next.filter((row) => row.key !== "").map((row) => [row.key, row.value])));
  };
  const setRow = (index: number, change: Partial<Row>) => update(rows.map((row, i) => (i === index ? { ...row, ...change } : row)));
  return (
    <>
      {rows.length === 0 && <p className="hint">None set.</p>}
      <ol className="schema-list">
        {rows.map((row, i) => (
          <li key={i} className="schema-map-row">
            <input
              id={i === 0 ? `${id}-0` : undefined}
              aria-label={`${label} ${i + 1} name`}
              placeholder="name"
              value={row.key}
              onChange={(event) => setRow(i, { key: event.target.value })}
              {...aria}
            />
            <input
              aria-label={`${label} ${i + 1} value`}
              placeholder="value"
              value={row.value}
              onChange={(event) => setRow(i, { value: event.target.value })}
              {...aria}
            />
            <button type="button" className="button ghost" aria-label={`Remove ${label} ${i + 1}`} onClick={() => update(rows.filter((_, j) => j !== i))}>
              Remove
            </button>
          </li>
        ))}
      </ol>
      <button type="button" className="button" onClick={() => setRows([...rows, { key: "", value: "" }])}>
        Add {label.toLowerCase()}
      </button>
    </>
  );
}

/** A sensitive field of its own: SecretField, remembering the secret the form was loaded with. */
function StoredSecretField({
  id,
  label,
  schema,
  value,
  onChange,
  required,
  aria,
}: {
  id: string;
  label: string;
  schema: Schema;
  value: unknown;
  onChange: (value: unknown) => void;
  required: boolean;
  aria: Aria;
}) {
  const [stored] = useState(() => storedSecret(value));
  return (
    <SecretField
      id={id}
      label={label}
      schema={schema}
      value={value}
      stored={stored}
      onChange={onChange}
      required={required}
      describedBy={aria["aria-describedby"]}
      invalid={aria["aria-invalid"]}
    />
  );
}

interface SecretRow {
  key: string;
  value: unknown;
  /** The stored secret this row was loaded with (see storedSecret). */
  stored: unknown;
}

/**
 * Key/value rows whose values are sensitive (headers): as StringMap, each
 * value a SecretField. A new row starts as a Secret; a row without a value
 * (a cleared secret) is left out of the value sent up, so saving removes it.
 */
function SecretMap({
  id,
  label,
  schema,
  value,
  onChange,
  aria,
}: {
  id: string;
  label: string;
  schema: Schema;
  value: Record<string, unknown>;
  onChange: (value: unknown) => void;
  aria: Aria;
}) {
  const [rows, setRows] = useState<SecretRow[]>(() => Object.entries(value).map(([key, v]) => ({ key, value: v, stored: storedSecret(v) })));
  const update = (next: SecretRow[]) => {
    setRows(next);
    onChange(Object.fromEntries(next.filter((row) => row.key !== "" && row.value !== undefined).map((row) => [row.key, row.value])));
  };
  const setRow = (index: number, change: Partial<SecretRow>) => update(rows.map((row, i) => (i === index ? { ...row, ...change } : row)));
  return (
    <>
      {rows.length === 0 && <p className="hint">None set.</p>}
      <ol className="schema-list">
        {rows.map((row, i) => (
          <li key={i} className="schema-map-row secret-map-row">
            <input
              id={i === 0 ? `${id}-0` : undefined}
              aria-label={`${label} ${i + 1} name`}
              placeholder="name"
              value={row.key}
              onChange={(event) => setRow(i, { key: event.target.value })}
              {...aria}
            />
            <SecretField
              id={`${id}-${i}-value`}
              label={`${label} ${i + 1} value`}
              schema={schema}
              value={row.value}
              stored={row.stored}
              onChange={(next) => setRow(i, { value: next })}
              required={row.key !== ""}
              name={row.key}
              describedBy={aria["aria-describedby"]}
              invalid={aria["aria-invalid"]}
            />
            <button type="button" className="button ghost" aria-label={`Remove ${label} ${i + 1}`} onClick={() => update(rows.filter((_, j) => j !== i))}>
              Remove
            </button>
          </li>
        ))}
      </ol>
      <button type="button" className="button" onClick={() => setRows([...rows, { key: "", value: undefined, stored: undefined }])}>
        Add {label.toLowerCase()}
      </button>
    </>
  );
}

/**
 * The fallback: the key's value as JSON. Text that does not parse marks the
 * box invalid (setCustomValidity), so the browser will not submit the form.
 */
function JsonField({
  id,
  label,
  required,
  schema,
  messages,
  value,
  onChange,
}: {
  id: string;
  label: string;
  required: boolean;
  schema: Schema;
  messages: string[];
  value: unknown;
  onChange: (value: unknown) => void;
}) {
  const [text, setText] = useState(() => (value === undefined ? "" : JSON.stringify(value, null, 2)));
  const [problem, setProblem] = useState<string | null>(null);
  function onText(event: ChangeEvent<HTMLTextAreaElement>) {
    const next = event.target.value;
    setText(next);
    let said: string | null = null;
    if (next.trim() === "") onChange(undefined);
    else {
      try {
        onChange(JSON.parse(next));
      } catch (error) {
        said = `Not valid JSON: ${(error as Error).message}`;
      }
    }
    setProblem(said);
    event.target.setCustomValidity(said ?? "");
  }
  const all = problem === null ? messages : [problem, ...messages];
  return (
    <Labelled id={id} label={`${label} (JSON)`} required={required} schema={schema} messages={all}>
      <textarea
        id={id}
        className="schema-json"
        rows={4}
        spellCheck={false}
        value={text}
        onChange={onText}
        required={required}
        {...described(id, schema, all)}
      />
    </Labelled>
  );
}
