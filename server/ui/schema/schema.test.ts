/**
 * SchemaForm's reading of the catalog's real schemas: the editor each
 * property gets, the defaults a new form starts from, and which field shows
 * an error the API names by path.
 */
import { expect, test } from "bun:test";
import { catalogView } from "../../catalog/index.ts";
import { ApiError } from "../api.ts";
import { fieldErrors, readableError } from "./errors.ts";
import { errorTarget, fieldKind, initialValue, labelOf, type Schema } from "./schema.ts";

const schemaOf = (kind: "sources" | "destinations" | "processors", type: string) => catalogView()[kind].find((e) => e.type === type)!.schema as Schema;

test("every catalog property gets an editor; the shapes the catalog uses get their own", () => {
  const filelog = schemaOf("sources", "filelog").properties!;
  expect(fieldKind(filelog.include!)).toBe("stringList");
  expect(fieldKind(filelog.start_at!)).toBe("choice");
  expect(fieldKind(schemaOf("sources", "hostmetrics").properties!.scrapers!)).toBe("choiceList");
  expect(fieldKind(schemaOf("sources", "otlp").properties!.grpc!)).toBe("object");
  expect(fieldKind(schemaOf("sources", "otlp").properties!.grpc!.properties!.enabled!)).toBe("boolean");
  expect(fieldKind(schemaOf("destinations", "otlphttp").properties!.headers!)).toBe("secretMap");
  expect(fieldKind({ type: "object", patternProperties: { "^.*$": { type: "string" } } })).toBe("stringMap");
  expect(fieldKind({ type: "integer" })).toBe("integer");
  expect(fieldKind({ oneOf: [{ const: "a", title: "A" }] })).toBe("choice");
  // Attribute actions: rows of fields, each value typed as text.
  const actions = schemaOf("processors", "attributes").properties!.actions!;
  expect(fieldKind(actions)).toBe("objectList");
  expect(fieldKind(actions.items!.properties!.value!)).toBe("scalar");
  // What it cannot render is edited as JSON, never left out.
  expect(fieldKind({ type: "array", items: { type: "object" } })).toBe("json");
  expect(fieldKind({ anyOf: [{ type: "number" }, { type: "boolean" }] })).toBe("json");
  expect(fieldKind({ anyOf: [{ type: "string" }, { type: "object" }] })).toBe("json");
  expect(labelOf("start_at", {})).toBe("Start at");
  expect(labelOf("grpc", { title: "OTLP/gRPC" })).toBe("OTLP/gRPC");
});

test("a new form starts from the schema's defaults, nested ones too, and keeps what it is given", () => {
  expect(initialValue(schemaOf("sources", "otlp"))).toEqual({
    grpc: { enabled: true, endpoint: "localhost:4317" },
    http: { enabled: true, endpoint: "localhost:4318" },
  });
  expect(initialValue(schemaOf("sources", "filelog"))).toEqual({
    include: [""],
    exclude: [],
    start_at: "end",
    parser: { format: "none", timestamp: {}, severity: {} },
    multiline: {},
  });
  expect(initialValue(schemaOf("sources", "filelog"), { include: ["/a/*.log"], start_at: "beginning" })).toEqual({
    include: ["/a/*.log"],
    exclude: [],
    start_at: "beginning",
    parser: { format: "none", timestamp: {}, severity: {} },
    multiline: {},
  });
  // A required list of objects starts with one item to fill in.
  expect(initialValue(schemaOf("processors", "attributes"))).toEqual({ actions: [{}] });
  expect(initialValue(schemaOf("processors", "batch"))).toEqual({ send_batch_size: 8192, timeout: "200ms" });
});

test("an API error lands on the field that edits its path", () => {
  const body: Schema = { type: "object", properties: { name: { type: "string" }, config: schemaOf("sources", "otlp") } };
  expect(errorTarget(body, "", "name")).toBe("name");
  expect(errorTarget(body, "", "config.grpc.endpoint")).toBe("config.grpc.endpoint");
  const filelog: Schema = { type: "object", properties: { config: schemaOf("sources", "filelog") } };
  expect(errorTarget(filelog, "", "config.include[1]")).toBe("config.include");
  expect(errorTarget(filelog, "", "config")).toBe("config");
  expect(errorTarget(filelog, "config", "name")).toBeNull();

  const error = new ApiError(400, "validation_failed", "The filelog source config is not valid.", [
    { path: "config.include[1]", message: "must not be empty" },
    { path: "name", message: "must be non-blank" },
  ]);
  expect(fieldErrors(error, { type: "object", properties: { name: { type: "string" }, ...filelog.properties } })).toEqual({
    "config.include": ["item 2: must not be empty"],
    name: ["must be non-blank"],
  });
  // Into a list of objects: the item's field, or the item when no field of it is named.
  const attributes = schemaOf("processors", "attributes");
  expect(errorTarget(attributes, "config", "config.actions[1].value")).toBe("config.actions[1].value");
  expect(errorTarget(attributes, "config", "config.actions[1]")).toBe("config.actions[1]");
  expect(errorTarget(attributes, "config", "config.actions[1].nope")).toBe("config.actions[1]");
  expect(errorTarget(attributes, "config", "config.actions")).toBe("config.actions");

  expect(readableError(error)!.details).toEqual(["config.include[1]: must not be empty", "name: must be non-blank"]);
});
