/**
 * Which collector an OpAMP agent instance is. First contact creates the
 * collector (unless the token was pre-bound), named from the agent's
 * description, in the enrollment token's environment, with no tags: what the
 * agent says about itself is kept as reported attributes (handler.ts), never
 * as environment or tags, which target (docs/architecture.md "Trust model").
 * It records `opamp_instances/<uid>` so a reconnect maps to the same one. A
 * credential that does not speak for the instance is refused
 * (InstanceRefused) before anything changes.
 * A clone (a second live agent with one instance UID) is split off as its own
 * collector under a new UID (splitClone).
 */
import { SYSTEM_ACTOR } from "../audit/audit.ts";
import type { Collectors } from "../collectors/collectors.ts";
import type { Enrollment } from "../enrollment/enrollment.ts";
import type { KeyValue } from "../gen/opamp/v1/anyvalue_pb.ts";
import type { AgentDescription } from "../gen/opamp/v1/opamp_pb.ts";
import type { Store } from "../store/store.ts";
import { InstanceRefused, type Credential } from "./credential.ts";
import { KeyedLock } from "../lib/keyed-lock.ts";

/** `opamp_instances/<instance_uid hex>`: which collector an agent instance is. */
export const INSTANCES = "opamp_instances";

interface InstanceRecord {
  collectorId: string;
  since: string;
  /** Set on a UID this server gave a clone: the collector whose credential the clone holds. */
  cloneOf?: string;
}

export interface IdentityDeps {
  store: Pick<Store, "get" | "write">;
  collectors: Pick<Collectors, "get" | "create">;
  enrollment: Pick<Enrollment, "opampCollector" | "redeemOpamp" | "bindCollector">;
}

export class Identity {
  /** First contact of one instance must create one collector. */
  private readonly lock = new KeyedLock();

  constructor(private readonly deps: IdentityDeps) {}

  /** Which collector this message's instance is: by token, by a known instance, or a new collector. */
  async resolve(credential: Credential, uid: string, description: AgentDescription | undefined): Promise<string> {
    return this.lock.run(uid, () => this.resolveCollector(credential, uid, description));
  }

  /**
   * A second live agent presented `uid` (a clone of a VM image, supervisor
   * state and all): a new collector with the original's environment and tags
   * is made for it under a fresh instance UID, which the agent is told to
   * take (AgentIdentification.new_instance_uid). The credential it holds, the
   * original's, speaks for that UID from now on (a clone, see resolve).
   */
  async splitClone(uid: string, collectorId: string): Promise<{ uid: string; collectorId: string }> {
    const original = await this.deps.collectors.get(collectorId);
    const newUid = Bun.randomUUIDv7().replaceAll("-", "");
    const at = new Date().toISOString();
    const clone = await this.deps.collectors.create(SYSTEM_ACTOR, {
      name: `${original.name.slice(0, 180)} (clone ${newUid.slice(-8)})`,
      managementMode: "opamp",
      environment: original.environment,
      tags: original.tags,
      cloneOf: { collectorId, name: original.name, instanceUid: uid, at },
    });
    await this.deps.store.write([
      { op: "put", collection: INSTANCES, id: newUid, data: { collectorId: clone.id, since: at, cloneOf: collectorId } satisfies InstanceRecord },
    ]);
    return { uid: newUid, collectorId: clone.id };
  }

  private async resolveCollector(credential: Credential, uid: string, description: AgentDescription | undefined): Promise<string> {
    const known = await this.deps.store.get<InstanceRecord>(INSTANCES, uid);
    // A UID this server gave a clone: the original's credential speaks for it.
    if (known?.data.cloneOf !== undefined && (await this.exists(known.data.collectorId)) && (await this.speaksFor(credential, known.data.cloneOf))) {
      return known.data.collectorId;
    }
    if (credential.kind === "collector") {
      // One collector's token must not take over another's instance (it would
      // decide what that host becomes when it next enrolls); a deleted
      // collector's instances are free to be claimed.
      if (known && known.data.collectorId !== credential.collectorId && (await this.exists(known.data.collectorId))) {
        throw new InstanceRefused(
          403,
          "permission_denied",
          "This instance_uid belongs to another collector; a collector token speaks only for its own collector's instances.",
        );
      }
      if (known?.data.collectorId !== credential.collectorId) await this.remember(uid, credential.collectorId);
      return credential.collectorId;
    }
    if (known && (await this.exists(known.data.collectorId))) {
      // A known instance is its collector's. instance_uids are not secrets, so an enrollment token speaks for
      // one only when it already enrolls that collector (made for it, or bound by this instance's first contact);
      // any other would be answered with that collector's config and token. Refused before redeeming: nothing changes.
      const enrolls = await this.deps.enrollment.opampCollector(credential.token);
      if (enrolls !== undefined && enrolls !== known.data.collectorId) {
        throw new InstanceRefused(
          403,
          "permission_denied",
          "This instance_uid belongs to an existing collector, which this enrollment token does not enroll. To re-enroll that collector, mint an enrollment token for it (POST /enrollment-tokens with its collectorId).",
        );
      }
    }
    const grant = await this.deps.enrollment.redeemOpamp(credential.token, uid);
    if (!grant) {
      throw new InstanceRefused(
        401,
        "unauthenticated",
        "This enrollment token is not valid for this instance_uid: it is bound to another instance, revoked or expired.",
      );
    }
    let collectorId = grant.collectorId;
    // A bound token outlives its expiry (enrollment.ts), not its collector.
    if (collectorId !== null && !(await this.exists(collectorId))) {
      throw new InstanceRefused(
        401,
        "unauthenticated",
        "The collector this enrollment token enrolls was deleted; mint a new enrollment token to enroll this host again.",
      );
    }
    if (collectorId === null) {
      const collector = await this.deps.collectors.create(SYSTEM_ACTOR, {
        name: collectorName(attributes(description), uid),
        managementMode: "opamp",
        environment: grant.environment,
      });
      collectorId = collector.id;
    }
    if (grant.collectorId === null) await this.deps.enrollment.bindCollector(grant.tokenId, collectorId);
    if (known?.data.collectorId !== collectorId) await this.remember(uid, collectorId);
    return collectorId;
  }

  /** Whether the credential is the collector's own token, or an enrollment token that enrolls it. */
  private async speaksFor(credential: Credential, collectorId: string): Promise<boolean> {
    if (credential.kind === "collector") return credential.collectorId === collectorId;
    return (await this.deps.enrollment.opampCollector(credential.token)) === collectorId;
  }

  private async remember(uid: string, collectorId: string): Promise<void> {
    await this.deps.store.write([{ op: "put", collection: INSTANCES, id: uid, data: { collectorId, since: new Date().toISOString() } }]);
  }

  private async exists(collectorId: string): Promise<boolean> {
    return this.deps.collectors.get(collectorId).then(
      () => true,
      () => false,
    );
  }
}

/** String attributes of an AgentDescription, identifying ones first. */
export function attributes(description: AgentDescription | undefined): Map<string, string> {
  const out = new Map<string, string>();
  const add = (list: KeyValue[]) => {
    for (const kv of list) {
      const v = kv.value?.value;
      if (v && (v.case === "stringValue" || v.case === "intValue" || v.case === "boolValue" || v.case === "doubleValue") && !out.has(kv.key)) {
        out.set(kv.key, String(v.value));
      }
    }
  };
  add(description?.identifyingAttributes ?? []);
  add(description?.nonIdentifyingAttributes ?? []);
  return out;
}

export function collectorName(attrs: Map<string, string>, uid: string): string {
  for (const key of ["service.instance.id", "host.name", "service.name"]) {
    const value = attrs.get(key)?.trim();
    if (value) return value.slice(0, 200);
  }
  return `opamp-${uid.slice(0, 12)}`;
}
