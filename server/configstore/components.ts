/**
 * Sources and destinations: typed records whose `config` the catalog
 * validates. They share every rule, so one class serves both kinds. Edits
 * land in the working tree; deleting a record something still uses is refused
 * with the list of users. A source's host paths must keep to the host-path
 * policy unless the caller holds its scope (catalog/hostpaths.ts).
 * Sensitive fields take the API's forms on a write and show their read form
 * on every answer (secrets/fields.ts); a new secret's sealed version lands in
 * the same write as the record naming it.
 */
import type { DestinationRecord, RouteRecord, SourceRecord } from "../../shared/config-records.ts";
import { auditEntry, type Actor } from "../audit/audit.ts";
import type { HostPaths } from "../catalog/hostpaths.ts";
import { findType, validateComponentConfig } from "../catalog/index.ts";
import { ConflictError, NotFoundError, ValidationError } from "../errors.ts";
import { keepStored, readForm, sealPlaintext, secretAudit } from "../secrets/fields.ts";
import type { SecretVault } from "../secrets/vault.ts";
import type { WriteOp } from "../store/store.ts";
import type { ConfigStore } from "./configstore.ts";
import { paths, toYaml, type Snapshot } from "./layout.ts";
import { collectorLabel, collectorNameMap, routeLabel, type CollectorNames } from "./names.ts";

export type ComponentKind = "source" | "destination";
type ComponentRecord = SourceRecord | DestinationRecord;

export interface ComponentInput {
  name: string;
  type: string;
  config?: Record<string, unknown>;
}

const LABEL = { source: "Source", destination: "Destination" } as const;

/** Who edits: the audit actor and, for an API caller, its scopes (none: no widening). */
export type Editor = Actor & { scopes?: ReadonlySet<string> };

export class Components {
  constructor(
    private readonly config: ConfigStore,
    readonly kind: ComponentKind,
    private readonly vault: SecretVault,
    /** Sources only: the host-path policy their configs keep to; null leaves paths unchecked. */
    private readonly hostPaths: HostPaths | null = null,
    /** Names the collectors an error message mentions; null leaves their ids. */
    private readonly collectorNames: CollectorNames | null = null,
  ) {}

  private path(id: string): string {
    return this.kind === "source" ? paths.source(id) : paths.destination(id);
  }

  private records(snapshot: Snapshot): Map<string, ComponentRecord> {
    return this.kind === "source" ? snapshot.sources : snapshot.destinations;
  }

  /** A record as the API shows it: sensitive values in their read form. */
  private shown(record: ComponentRecord): ComponentRecord {
    return { ...record, config: readForm(findType(this.kind, record.type)?.schema, record.config) };
  }

  async list(): Promise<ComponentRecord[]> {
    return [...this.records(await this.config.worktree()).values()].sort((a, b) => (a.id < b.id ? -1 : 1)).map((r) => this.shown(r));
  }

  async get(id: string): Promise<ComponentRecord> {
    const record = this.records(await this.config.worktree()).get(id);
    if (!record) throw new NotFoundError(LABEL[this.kind], id);
    return this.shown(record);
  }

  /**
   * A config as the API sent it, in the tree's forms: keep markers replaced
   * by what `stored` holds at their path, validated by the catalog (which
   * names an unknown type), plaintext sealed.
   */
  private async toStored(who: Editor, type: string, input: Record<string, unknown>, stored: Record<string, unknown> | undefined) {
    const schema = findType(this.kind, type)?.schema;
    const valid = validateComponentConfig(this.kind, type, schema ? keepStored(schema, input, stored, "config") : input);
    return sealPlaintext(this.vault, who, schema!, valid, stored);
  }

  /** The record's file and audit entries, with the secrets it sets or clears, in one write. */
  private async write(
    who: Editor,
    record: ComponentRecord,
    before: ComponentRecord | undefined,
    expect: number | "absent",
    action: string,
    details: Record<string, unknown>,
    ops: WriteOp[],
  ) {
    const secrets = secretAudit(who, findType(this.kind, record.type)!.schema, before?.config, record.config, {
      type: this.kind,
      id: record.id,
      root: "config",
    });
    await this.config.edit(
      [{ path: this.path(record.id), text: toYaml(record), expect }],
      [auditEntry(who, action, this.kind, record.id, details), ...secrets],
      ops,
    );
  }

  async create(who: Editor, input: ComponentInput): Promise<ComponentRecord> {
    const sealed = await this.toStored(who, input.type, input.config ?? {}, undefined);
    const record: ComponentRecord = { id: Bun.randomUUIDv7(), name: input.name.trim(), type: input.type, config: sealed.config };
    this.hostPaths?.enforce(who, record.type, record.config, []);
    await this.write(who, record, undefined, "absent", `${this.kind}.create`, { name: record.name, type: record.type }, sealed.ops);
    return this.shown(record);
  }

  async replace(who: Editor, id: string, input: ComponentInput): Promise<ComponentRecord> {
    return this.config.guarded(async (tree) => {
      const current = this.records(tree.snapshot).get(id);
      if (!current) throw new NotFoundError(LABEL[this.kind], id);
      if (input.type !== current.type) {
        throw new ValidationError(`A ${this.kind}'s type cannot change (it is '${current.type}'); create a new ${this.kind} instead.`, [
          { path: "type", message: `must stay '${current.type}'` },
        ]);
      }
      const sealed = await this.toStored(who, current.type, input.config ?? {}, current.config);
      const record: ComponentRecord = { id, name: input.name.trim(), type: current.type, config: sealed.config };
      this.hostPaths?.enforce(who, record.type, record.config, [current.config]);
      await this.write(who, record, current, tree.version(this.path(id)) ?? "absent", `${this.kind}.update`, { name: record.name }, sealed.ops);
      return this.shown(record);
    });
  }

  /**
   * Refused while anything refers to the record. The check reads every file
   * at one moment, and the delete is guarded by the version that read saw:
   * whatever starts referring to the record after it keeps (re-versions) the
   * record, so one of the two writes fails.
   */
  async delete(who: Actor, id: string): Promise<void> {
    await this.config.guarded(async (tree) => {
      const record = this.records(tree.snapshot).get(id);
      if (!record) throw new NotFoundError(LABEL[this.kind], id);
      const users = usersOf(tree.snapshot, this.kind, id, await collectorNameMap(referringCollectors(tree.snapshot, this.kind, id), this.collectorNames));
      if (users.length > 0) {
        throw new ConflictError(
          `${LABEL[this.kind]} "${record.name}" is still used by ${users.map((u) => u.label).join(", ")}; remove those first.`,
          "still_referenced",
          users.map(({ path, message }) => ({ path, message })),
        );
      }
      const schema = findType(this.kind, record.type)?.schema;
      const cleared = schema ? secretAudit(who, schema, record.config, undefined, { type: this.kind, id, root: "config" }) : [];
      await this.config.edit(
        [{ path: this.path(id), text: null, expect: tree.version(this.path(id)) ?? "present" }],
        [auditEntry(who, `${this.kind}.delete`, this.kind, id, { name: record.name }), ...cleared],
      );
    }, true);
  }
}

/** The collectors that activate this source or destination, and (a source) the routes that read it. */
function activationsAndRoutes(snapshot: Snapshot, kind: ComponentKind, id: string): { activeOn: string[]; routes: RouteRecord[] } {
  const activeOn: string[] = [];
  for (const activations of snapshot.activations.values()) {
    const list = kind === "source" ? activations.sources.map((a) => a.sourceId) : activations.destinations.map((a) => a.destinationId);
    if (list.includes(id)) activeOn.push(activations.collectorId);
  }
  const routes = kind === "source" ? [...snapshot.routes.values()].filter((route) => route.sourceId === id) : [];
  return { activeOn, routes };
}

/** The collectors whose activations or routes name this source or destination. */
function referringCollectors(snapshot: Snapshot, kind: ComponentKind, id: string): string[] {
  const { activeOn, routes } = activationsAndRoutes(snapshot, kind, id);
  return [...activeOn, ...routes.map((route) => route.collectorId)];
}

/**
 * Everything in a snapshot that names this source or destination, as error
 * details (path as before, message naming records by name) and a short label
 * for the summary message.
 */
export function usersOf(
  snapshot: Snapshot,
  kind: ComponentKind,
  id: string,
  collectors: ReadonlyMap<string, string | null> = new Map(),
): { path: string; message: string; label: string }[] {
  const users: { path: string; message: string; label: string }[] = [];
  const { activeOn, routes } = activationsAndRoutes(snapshot, kind, id);
  for (const collectorId of activeOn) {
    const collector = collectorLabel(collectorId, collectors);
    users.push({ path: `collectors/${collectorId}`, message: `active on ${collector}`, label: collector });
  }
  for (const route of routes) {
    const label = routeLabel(route, snapshot, collectors);
    users.push({ path: `routes/${route.id}`, message: `${label} reads it`, label });
  }
  for (const pipeline of snapshot.pipelines.values()) {
    for (const node of pipeline.topology.nodes) {
      if (node.kind === kind && node.ref === id) {
        users.push({ path: `pipelines/${pipeline.id}`, message: `node ${node.id} of pipeline "${pipeline.name}"`, label: `pipeline "${pipeline.name}"` });
      }
    }
  }
  return users;
}
